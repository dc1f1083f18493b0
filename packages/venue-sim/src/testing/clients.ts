import https from 'node:https';

export interface HttpResult {
  status: number;
  headers: Headers;
  text: string;
  json: unknown;
}

export async function get(
  url: string,
  headers: Record<string, string> = {},
  init: RequestInit = {},
): Promise<HttpResult> {
  const res = await fetch(url, { headers, ...init });
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, text, json: body };
}

/** GET over HTTPS trusting `ca` (the IBKR portal's self-signed certificate). */
export function httpsGet(
  url: string,
  ca: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = https.get(url, { ca, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
  });
}

/** The WebSocket test client, shared with the gateway's tests. */
export { WsTestClient as FeedClient } from '@depthgate/test-utils';
