import type { Handler, RouteAuth } from './types';

interface Route {
  method: string;
  pattern: string;
  segments: string[];
  handler: Handler;
  auth: RouteAuth;
}

export interface RouteMatch {
  route: Route;
  params: Record<string, string>;
}

/**
 * A small router: exact paths through one map lookup, parameterised paths (`/markets/:ticker/orderbook`) through a
 * scan of the routes with the same number of segments. Built once at start-up.
 */
export class Router {
  private readonly exact = new Map<string, Route>();
  private readonly bySegments = new Map<number, Route[]>();

  constructor(private readonly prefix = '') {}

  get(pattern: string, handler: Handler, auth: RouteAuth = 'none'): this {
    return this.add('GET', pattern, handler, auth);
  }

  post(pattern: string, handler: Handler, auth: RouteAuth = 'none'): this {
    return this.add('POST', pattern, handler, auth);
  }

  delete(pattern: string, handler: Handler, auth: RouteAuth = 'none'): this {
    return this.add('DELETE', pattern, handler, auth);
  }

  add(method: string, pattern: string, handler: Handler, auth: RouteAuth = 'none'): this {
    const full = this.prefix + pattern;
    const segments = full.split('/').slice(1);
    const route: Route = { method, pattern: full, segments, handler, auth };
    if (!segments.some((s) => s.startsWith(':'))) {
      this.exact.set(`${method} ${full}`, route);
    } else {
      const list = this.bySegments.get(segments.length) ?? [];
      list.push(route);
      this.bySegments.set(segments.length, list);
    }
    return this;
  }

  match(method: string, path: string): RouteMatch | undefined {
    const m = method === 'HEAD' ? 'GET' : method;
    const hit = this.exact.get(`${m} ${path}`);
    if (hit) return { route: hit, params: {} };
    const parts = path.split('/').slice(1);
    const candidates = this.bySegments.get(parts.length);
    if (!candidates) return undefined;
    outer: for (const route of candidates) {
      if (route.method !== m) continue;
      const params: Record<string, string> = {};
      for (let i = 0; i < parts.length; i++) {
        const seg = route.segments[i] as string;
        const part = parts[i] as string;
        if (seg.startsWith(':')) {
          if (part === '') continue outer;
          try {
            params[seg.slice(1)] = decodeURIComponent(part);
          } catch {
            continue outer;
          }
        } else if (seg !== part) {
          continue outer;
        }
      }
      return { route, params };
    }
    return undefined;
  }
}
