/**
 * Checks HTTP answers against a service's OpenAPI 3.1 document — the one the service generates from its schemas and
 * serves at `/openapi.json` — so that an answer that drifts from the contract fails a test.
 *
 * `observe(app)` wraps a request listener (an Express app): every answer it finishes is checked, whatever sent the
 * request (supertest, fetch, node:http, a client over a real socket), and the problems are kept until `take()`.
 * An answer is checked for:
 *
 * - an operation of the document for its method and path (HEAD as GET; a path parameter that ends a template may
 *   span segments when no template matches otherwise, as the gateway's `{resource}` does); a path no operation
 *   claims must be answered as the option `notFound` says, a method a path does not take as `wrongMethod` says
 *   (by default: not checked);
 * - its status among the operation's responses, and its media type among that response's `content` (none when the
 *   response has no content);
 * - its body (decoded from gzip or br) against the media type's schema, by ajv in JSON Schema 2020-12 mode (the
 *   dialect of OpenAPI 3.1): JSON as a whole; NDJSON line by line (OpenAPI 3.1 has no sequence media type: the
 *   schema is a line's); CSV as the NDJSON lines it stands for when the same response also offers NDJSON — the
 *   header's columns are the row's fields in the row schema's order, each data line the row in those columns
 *   (integers as numbers; a field may be quoted as RFC 4180 says), `#gap,from_ts,to_ts,reason,detected_at` a
 *   `{"type":"gap",…}` line (`#trades_gap,…` a `{"type":"trades_gap",…}` one), `#trade,ts,trade_id,price,size,side
 *   [,received_ts][,venue_seq]` (the header's optional columns) a `{"type":"trade",…}` line and
 *   `#end,count,next_cursor` the `{"type":"end",…}` line. Other media types (Parquet) are not read.
 *
 * Formats (`format: date-time`) are not asserted: the schemas carry patterns where the wire form matters.
 * An answer cut before its end (the connection closed without finishing) is not checked: it is no answer.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import type { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';

/** The parts of an OpenAPI 3.1 document the checker reads. */
export interface OpenApiDocument {
  openapi: string;
  paths?: object;
  components?: object;
}

interface MediaType {
  schema?: unknown;
}
interface ResponseObject {
  content?: Record<string, MediaType>;
  $ref?: string;
}
interface Operation {
  responses?: Record<string, ResponseObject>;
}

/** An answer as the caller received it. */
export interface Answer {
  method: string;
  /** The request's path and query, as sent. */
  url: string;
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: Buffer;
  /** The request's Host header. */
  host?: string;
}

export interface ContractCheckerOptions {
  /** A path no operation claims must be answered with this status and body schema (a JSON pointer). */
  notFound?: { status: number; schema: string };
  /** A method a path does not take must be answered so (the gateway: 405); by default as `notFound` says. */
  wrongMethod?: { status: number; schema: string };
  /** The document's path an answer is for, when it is not the request's (a gateway's platform hosts). */
  path?: (answer: Answer) => string | undefined;
  /** Answers not to check (e.g. a gateway's pass-through answers). */
  skip?: (answer: Answer) => boolean;
}

/** The id of the schema holding the document's component schemas. */
const SCHEMAS = 'openapi-components';
const COMPONENT = '#/components/schemas/';

/** `value` with every `$ref` to a component schema pointing into the schema of components (SCHEMAS). */
function localRefs<T>(value: T): T {
  return JSON.parse(JSON.stringify(value), (key, v: unknown) =>
    key === '$ref' && typeof v === 'string' && v.startsWith(COMPONENT)
      ? `${SCHEMAS}#/$defs/${v.slice(COMPONENT.length)}`
      : v,
  ) as T;
}

/** The value at a JSON pointer (`#/a/b`) of `root`. */
function at(root: unknown, jsonPointer: string): unknown {
  return jsonPointer
    .slice(2)
    .split('/')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], root);
}

const pointer = (...parts: string[]) => `#/${parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`;

function header(answer: Answer, name: string): string {
  const v = answer.headers[name];
  return Array.isArray(v) ? v.join(', ') : v === undefined ? '' : String(v);
}

function decoded(answer: Answer): Buffer {
  const encoding = header(answer, 'content-encoding').trim().toLowerCase();
  if (encoding === 'gzip') return gunzipSync(answer.body);
  if (encoding === 'br') return brotliDecompressSync(answer.body);
  if (encoding === 'deflate') return inflateSync(answer.body);
  return answer.body;
}

interface Route {
  template: string;
  pattern: RegExp;
  /** The pattern with a last parameter that may span segments (`/api/v1/{platform}/{resource}`), if it ends in one. */
  greedy: RegExp | undefined;
  params: number;
  item: Record<string, unknown>;
}

/** The path template as a pattern; `greedy`: its last parameter, when it ends the path, may contain slashes. */
function templatePattern(template: string, greedy: boolean): RegExp | undefined {
  const parts = template.split(/(\{[^}]+\})/).filter((p) => p !== '');
  if (greedy && !(parts.at(-1) ?? '').startsWith('{')) return undefined;
  return new RegExp(
    `^${parts
      .map((part, i) =>
        part.startsWith('{')
          ? greedy && i === parts.length - 1
            ? '(.+)'
            : '([^/]+)'
          : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
      )
      .join('')}$`,
  );
}

export class ContractChecker {
  private readonly routes: Route[];
  /** By JSON pointer, and by the schema's text. */
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly problems: string[] = [];

  private constructor(
    private readonly doc: OpenApiDocument,
    private readonly ajv: Ajv2020,
    private readonly options: ContractCheckerOptions,
  ) {
    this.routes = Object.entries((doc.paths ?? {}) as Record<string, Record<string, unknown>>)
      .map(([template, item]) => ({
        template,
        item,
        params: (template.match(/\{[^}]+\}/g) ?? []).length,
        pattern: templatePattern(template, false) as RegExp,
        greedy: templatePattern(template, true),
      }))
      // A literal path wins over a templated one.
      .sort((a, b) => a.params - b.params);
  }

  /** A checker of `doc` (ajv is loaded here, on first use, so that tests which never check do not pay for it). */
  static async create(doc: OpenApiDocument, options: ContractCheckerOptions = {}): Promise<ContractChecker> {
    if (!doc.openapi.startsWith('3.1')) throw new Error(`not an OpenAPI 3.1 document: ${doc.openapi}`);
    const { Ajv2020 } = await import('ajv/dist/2020.js');
    // Strict: a keyword ajv does not know is an error in the document, not something to skip. OpenAPI's own
    // annotations inside schemas are declared as such.
    // (The schemas' patterns are ASCII: without the u flag, ajv's regular expressions run faster.)
    const ajv = new Ajv2020({ strict: true, allErrors: false, validateFormats: false, unicodeRegExp: false });
    ajv.addKeyword({ keyword: 'example' });
    ajv.addKeyword({ keyword: 'discriminator' });
    ajv.addKeyword({ keyword: 'externalDocs' });
    ajv.addKeyword({ keyword: 'xml' });
    // The components' schemas as the $defs of one schema, so that every $ref resolves there.
    const schemas = (doc.components as { schemas?: Record<string, unknown> } | undefined)?.schemas ?? {};
    ajv.addSchema({ $id: SCHEMAS, $defs: localRefs(schemas) });
    return new ContractChecker(doc, ajv, options);
  }

  /** The problems of one answer (empty: it keeps the contract). */
  check(answer: Answer): string[] {
    if (this.options.skip?.(answer)) return [];
    const method = answer.method.toLowerCase();
    // An absolute-form target (`GET http://host/path`) is about its path.
    const target = answer.url.startsWith('/')
      ? answer.url
      : URL.canParse(answer.url)
        ? new URL(answer.url).pathname
        : '';
    const path = this.options.path?.(answer) ?? target.split('?')[0] ?? '';
    const what = `${answer.method} ${answer.url.length > 120 ? `${answer.url.slice(0, 120)}…` : answer.url} → ${answer.status}`;
    const route =
      this.routes.find((r) => r.pattern.test(path)) ?? this.routes.find((r) => r.greedy?.test(path) ?? false);
    const operation = route && ((route.item[method] ?? (method === 'head' ? route.item.get : undefined)) as Operation);
    if (!route || !operation) {
      const rule = route ? (this.options.wrongMethod ?? this.options.notFound) : this.options.notFound;
      if (!rule) return [];
      if (answer.status !== rule.status) return [`${what}: no operation of the contract, yet not ${rule.status}`];
      return this.body(what, answer, 'application/json', rule.schema);
    }
    const at = [route.template, route.item[method] ? method : 'get'];
    const responses = operation.responses ?? {};
    const key = [String(answer.status), `${String(answer.status)[0]}XX`, 'default'].find((k) => k in responses);
    if (key === undefined) {
      return [
        `${what}: status ${answer.status} is not among ${Object.keys(responses).join(', ')} of ${route.template}`,
      ];
    }
    const response = this.resolve(responses[key] as ResponseObject);
    const type = header(answer, 'content-type').split(';')[0]?.trim().toLowerCase() ?? '';
    const content = response.content;
    if (!content) {
      return answer.body.length === 0 || method === 'head' ? [] : [`${what}: a body where the contract has none`];
    }
    const mediaKey = [type, `${type.split('/')[0]}/*`, '*/*'].find((k) => k in content);
    if (mediaKey === undefined) {
      return [`${what}: media type "${type}" is not among ${Object.keys(content).join(', ')}`];
    }
    if (method === 'head') return [];
    const schema = pointer('paths', ...at, 'responses', key, 'content', mediaKey, 'schema');
    return this.body(what, answer, type, schema, content);
  }

  private resolve(response: ResponseObject): ResponseObject {
    const ref = response.$ref;
    if (ref === undefined) return response;
    const name = ref.split('/').at(-1) ?? '';
    return (this.doc.components as { responses: Record<string, ResponseObject> }).responses[name] as ResponseObject;
  }

  private validator(schemaPointer: string): ValidateFunction {
    let validate = this.validators.get(schemaPointer);
    if (validate === undefined) {
      const schema = at(this.doc, schemaPointer);
      if (schema === undefined) throw new Error(`no schema at ${schemaPointer}`);
      // Many responses share one schema (a $ref): compiled once.
      const text = JSON.stringify(localRefs(schema as object));
      validate = this.validators.get(text) ?? this.ajv.compile(JSON.parse(text) as object);
      this.validators.set(text, validate);
      this.validators.set(schemaPointer, validate);
    }
    return validate;
  }

  private body(
    what: string,
    answer: Answer,
    type: string,
    schemaPointer: string,
    content: Record<string, MediaType> = {},
  ): string[] {
    let text: string;
    try {
      text = decoded(answer).toString('utf8');
    } catch (err) {
      return [`${what}: the body does not decode (${(err as Error).message})`];
    }
    const json = type === 'application/json' || type.endsWith('+json');
    const ndjson = type === 'application/x-ndjson';
    const csv = type === 'text/csv' && 'application/x-ndjson' in content;
    if (!json && !ndjson && !csv) return [];
    const pointerOf = csv ? schemaPointer.replace(/text~1csv\/schema$/, 'application~1x-ndjson/schema') : schemaPointer;
    const validate = this.validator(pointerOf);
    // A line schema that is a oneOf (a row, a gap marker, the end line: exclusive by construction) is tried branch by
    // branch, the row first: a line costs one branch's check instead of all of them; the oneOf says what is wrong.
    const branches = json ? [] : this.branches(pointerOf);
    const problem = (value: unknown, where: string): string | undefined => {
      for (const branch of branches) if (branch(value)) return undefined;
      if (validate(value)) return undefined;
      const e = validate.errors?.[0];
      const shown = JSON.stringify(value);
      return `${what}: ${where}${e ? ` at "${e.instancePath}" ${e.message ?? ''} (${e.schemaPath})` : ''}: ${
        shown.length > 300 ? `${shown.slice(0, 300)}…` : shown
      }`;
    };
    const parse = (line: string, where: string): unknown => {
      try {
        return JSON.parse(line);
      } catch {
        throw new Error(`${what}: ${where} is not JSON: ${line.slice(0, 200)}`);
      }
    };
    try {
      if (json) {
        const p = problem(parse(text, 'the body'), 'the body');
        return p ? [p] : [];
      }
      if (!text.endsWith('\n')) return [`${what}: the body does not end with a newline`];
      const lines = text.slice(0, -1).split('\n');
      const values = ndjson
        ? lines.map((line, i) => parse(line, `line ${i + 1}`))
        : this.csvLines(what, lines, schemaPointer.replace(/text~1csv\/schema$/, 'application~1x-ndjson/schema'));
      for (let i = 0; i < values.length; i++) {
        const p = problem(values[i], `line ${i + (csv ? 2 : 1)}`);
        if (p) return [p];
      }
      return [];
    } catch (err) {
      return [(err as Error).message];
    }
  }

  /** The validators of the branches of the oneOf at `schemaPointer` (none when it is not one). */
  private branches(schemaPointer: string): ValidateFunction[] {
    const oneOf = (at(this.doc, schemaPointer) as { oneOf?: unknown[] } | undefined)?.oneOf ?? [];
    return oneOf.map((_, i) => this.validator(`${schemaPointer}/oneOf/${i}`));
  }

  /** The NDJSON lines a CSV body stands for (see the header comment). */
  private csvLines(what: string, lines: string[], lineSchema: string): unknown[] {
    const schema = at(this.doc, lineSchema) as { oneOf?: { $ref?: string }[] } | undefined;
    const rowSchema = (schema?.oneOf ?? [])
      .map((s) => at(this.doc, s.$ref ?? '') as { properties?: Record<string, unknown> } | undefined)
      .find((s) => s?.properties !== undefined && !('type' in s.properties));
    const properties = (rowSchema?.properties ?? {}) as Record<string, { type?: string }>;
    const names = Object.keys(properties);
    const columns = (lines.shift() ?? '').split(',');
    const inOrder = names.filter((n) => columns.includes(n));
    if (columns.join() !== inOrder.join()) {
      throw new Error(`${what}: CSV header "${columns.join()}" is not the row's fields in order (${names.join()})`);
    }
    const integer = columns.map((name) => properties[name]?.type === 'integer');
    const tradeExtras = columns.filter((name) => name === 'received_ts' || name === 'venue_seq');
    return lines.map((line) => {
      const f = csvFields(line);
      if (f[0] === '#gap' || f[0] === '#trades_gap') {
        const type = f[0].slice(1);
        if (f.length !== 5) return { type, fields: f.length };
        return { type, from_ts: f[1], to_ts: f[2], reason: f[3], detected_at: f[4] };
      }
      if (f[0] === '#trade') {
        // A trade line carries the optional fields the header's rows carry (received_ts, venue_seq), in its order.
        if (f.length !== 6 + tradeExtras.length) return { type: 'trade', fields: f.length };
        const [, ts, trade_id, price, size, side, ...extras] = f;
        return {
          type: 'trade',
          ts,
          trade_id,
          price,
          size,
          side,
          ...Object.fromEntries(tradeExtras.map((name, i) => [name, extras[i]])),
        };
      }
      if (f[0] === '#end') {
        if (f.length !== 3 || !/^[0-9]+$/.test(f[1] ?? '')) return { type: 'end', fields: f };
        return { type: 'end', count: Number(f[1]), next_cursor: f[2] === '' ? null : f[2] };
      }
      if (f.length !== columns.length) return { columns: f.length };
      const row: Record<string, unknown> = {};
      for (let i = 0; i < columns.length; i++) {
        const value = f[i] as string;
        row[columns[i] as string] = integer[i] && /^-?[0-9]+$/.test(value) ? Number(value) : value;
      }
      return row;
    });
  }

  /** Wraps a request listener so that every answer it finishes is checked (see the header comment). */
  observe<L extends (req: IncomingMessage, res: ServerResponse, ...rest: never[]) => unknown>(listener: L): L {
    return new Proxy(listener, {
      apply: (target, thisArg, args: [IncomingMessage, ServerResponse, ...never[]]) => {
        this.record(args[0], args[1]);
        return Reflect.apply(target, thisArg, args);
      },
    });
  }

  /** Checks the answer `res` will finish (from here on, what is written to it is kept). */
  record(req: IncomingMessage, res: ServerResponse): void {
    const method = req.method ?? 'GET';
    const url = req.url ?? '';
    const host = req.headers.host;
    const chunks: Buffer[] = [];
    const keep = (chunk: unknown, encoding: unknown) => {
      if (typeof chunk === 'string') chunks.push(Buffer.from(chunk, (encoding as BufferEncoding) || 'utf8'));
      else if (chunk instanceof Uint8Array) chunks.push(Buffer.from(chunk));
    };
    const write = res.write;
    const end = res.end;
    res.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
      keep(chunk, typeof rest[0] === 'string' ? rest[0] : undefined);
      return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
    } as ServerResponse['write'];
    res.end = function (this: ServerResponse, chunk?: unknown, ...rest: unknown[]) {
      if (typeof chunk !== 'function') keep(chunk, typeof rest[0] === 'string' ? rest[0] : undefined);
      return (end as (...a: unknown[]) => ServerResponse).call(this, chunk, ...rest);
    } as ServerResponse['end'];
    res.once('finish', () => {
      const answer = {
        method,
        url,
        host,
        status: res.statusCode,
        headers: res.getHeaders(),
        body: Buffer.concat(chunks),
      };
      this.problems.push(...this.check(answer));
    });
  }

  /** The problems found since the last call. */
  take(): string[] {
    return this.problems.splice(0);
  }
}

/**
 * Fails the tests of a file when answers broke the contract: create one at the top level of a test harness module
 * (so the `afterEach` it registers is the importing file's own), `watch` each checker, `release` it when its app
 * closes (which throws for what the last test left).
 */
export class ContractWatch {
  private readonly checkers = new Set<ContractChecker>();

  constructor() {
    const afterEach = (globalThis as { afterEach?: (fn: () => void) => void }).afterEach;
    afterEach?.(() => ContractWatch.fail([...this.checkers]));
  }

  watch(checker: ContractChecker): ContractChecker {
    this.checkers.add(checker);
    return checker;
  }

  release(checker: ContractChecker): void {
    this.checkers.delete(checker);
    ContractWatch.fail([checker]);
  }

  private static fail(checkers: ContractChecker[]): void {
    const problems = checkers.flatMap((c) => c.take());
    if (problems.length > 0) {
      throw new Error(`${problems.length} answer(s) broke the OpenAPI contract:\n${problems.join('\n')}`);
    }
  }
}

/** The fields of a CSV line: split at commas outside quotes, a quoted field unquoted (RFC 4180: `""` is a quote). */
export function csvFields(line: string): string[] {
  if (!line.includes('"')) return line.split(',');
  const fields: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string;
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      fields.push(field);
      field = '';
    } else field += c;
  }
  fields.push(field);
  return fields;
}
