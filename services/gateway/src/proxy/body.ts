import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError } from '@depthgate/service-kit';

/** The body of a read-only POST, checked: at most the configured size, JSON in UTF-8. */
export interface RequestBody {
  /** The bytes as received; forwarded as they are. */
  bytes: Buffer;
  /** The same bytes as text, for signers that sign the body (valid UTF-8, so it is the same byte sequence). */
  text: string;
  /** The caller's Content-Type, forwarded with the body. */
  contentType: string;
  /** SHA-256 of the Content-Type and the bytes: identical bodies share an upstream call, others never do. */
  digest: string;
}

/** `application/json` or a `+json` type (RFC 6839), with no charset or UTF-8 (RFC 8259 §8.1). */
const JSON_MEDIA_TYPE = /^[a-z0-9!#$&^_.+-]+\/(?:json|[a-z0-9!#$&^_.+-]+\+json)$/;
/** A connection whose request body was not read is kept this long after the refusal is sent, then cut. */
const LINGER_MS = 1000;

export function isJsonContentType(value: string | undefined): value is string {
  if (value === undefined) return false;
  const [type = '', ...params] = value.split(';');
  const essence = type.trim().toLowerCase();
  if (!JSON_MEDIA_TYPE.test(essence)) return false;
  for (const param of params) {
    const eq = param.indexOf('=');
    if (param.slice(0, eq).trim().toLowerCase() !== 'charset') continue;
    const charset = param
      .slice(eq + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1')
      .toLowerCase();
    if (charset !== 'utf-8' && charset !== 'utf8') return false;
  }
  return true;
}

/**
 * A refusal sent before the body was read: the connection closes after it (the unread body cannot be skipped
 * safely), and is cut shortly after if the caller keeps sending.
 */
function refuseUnread(res: ServerResponse, error: AppError): AppError {
  res.once('finish', () => setTimeout(() => res.socket?.destroy(), LINGER_MS).unref());
  return new AppError(error.code, error.message, { headers: { ...error.headers, Connection: 'close' } });
}

const tooLarge = (limit: number) => new AppError('payload_too_large', `The request body is larger than ${limit} bytes`);

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Reads a read-only POST's body: 413 `payload_too_large` when its declared or actual size exceeds `limit` (never
 * buffering more than that), 415 `unsupported_media_type` unless its Content-Type is JSON and it parses as JSON.
 * `done` gets the body or the error to answer with; it is not called when the caller goes away meanwhile.
 */
export function readJsonBody(
  req: IncomingMessage,
  res: ServerResponse,
  limit: number,
  done: (result: RequestBody | AppError) => void,
): void {
  const contentType = req.headers['content-type'];
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) return done(refuseUnread(res, tooLarge(limit)));
  if (!isJsonContentType(contentType)) {
    const refusal = new AppError(
      'unsupported_media_type',
      'Only JSON request bodies are forwarded (Content-Type: application/json)',
    );
    return done(declared === '0' ? refusal : refuseUnread(res, refusal));
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let settled = false;
  const settle = (result: RequestBody | AppError | undefined) => {
    if (settled) return;
    settled = true;
    req.off('data', onData);
    if (result) done(result);
  };
  const onData = (chunk: Buffer) => {
    size += chunk.length;
    if (size > limit) {
      chunks.length = 0;
      req.pause();
      return settle(refuseUnread(res, tooLarge(limit)));
    }
    chunks.push(chunk);
  };
  req.on('data', onData);
  req.once('end', () => {
    if (settled) return; // refused already; this is the rest of the body being discarded
    const bytes = Buffer.concat(chunks, size);
    let text: string;
    try {
      text = utf8.decode(bytes);
      JSON.parse(text);
    } catch {
      return settle(new AppError('unsupported_media_type', 'The request body is not JSON (UTF-8)'));
    }
    const digest = createHash('sha256').update(contentType).update('\0').update(bytes).digest('base64url');
    settle({ bytes, text, contentType, digest });
  });
  // The caller left before its body was complete: there is no one to answer.
  req.once('close', () => settle(undefined));
  req.once('error', () => settle(undefined));
}
