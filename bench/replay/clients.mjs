// The replay benchmark's clients: one replay over the WebSocket replay or over the NDJSON HTTP replay, counting the
// recorded messages as they arrive (no JSON parsing on the timed path, on either side), with the times the benchmark
// needs. Shared by run.mjs and the load of load.mjs.
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';

export const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

/** `from`, `to` (ms) as the replay's query. */
export const windowQuery = ({ from, to }) => `from=${new Date(from).toISOString()}&to=${new Date(to).toISOString()}`;

/**
 * One WebSocket replay: connects, sends the venue's subscribe, counts the recorded messages (the acks before them are
 * not counted) until the replay closes it. `onMessage(index, at)` (optional) is told each message's arrival
 * (performance.now() ms). Resolves { messages, acks, code, reason, startedAt, firstAt, endAt } (times in
 * performance.now() ms); rejects on a refused handshake, with the service's answer.
 */
export function wsReplay({ base, venue, ticker, window, speed, key, onMessage, onSocket }) {
  return new Promise((resolve, reject) => {
    const url = `${base.replace(/^http/, 'ws')}/ws/replay/v1/${venue.platform}?${windowQuery(window)}&speed=${speed}`;
    const startedAt = performance.now();
    const ws = new WebSocket(url, {
      headers: { 'X-API-Key': key },
      perMessageDeflate: false,
      skipUTF8Validation: true,
    });
    onSocket?.(ws);
    let messages = 0;
    let acks = 0;
    let firstAt = NaN;
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => reject(new Error(`handshake refused: ${res.statusCode} ${body.slice(0, 300)}`)));
    });
    ws.once('open', () => {
      for (const m of venue.subscribe(ticker)) ws.send(JSON.stringify(m));
    });
    ws.on('message', (data) => {
      const at = performance.now();
      if (messages === 0 && venue.isAck(data.toString())) return void acks++;
      if (messages === 0) firstAt = at;
      onMessage?.(messages, at);
      messages++;
    });
    ws.once('error', (err) => reject(err));
    ws.once('close', (code, reason) =>
      resolve({ messages, acks, code, reason: String(reason), startedAt, firstAt, endAt: performance.now() }),
    );
  });
}

/**
 * One NDJSON HTTP replay of the same window: counts its lines (the last, `{"type":"end","count":N}`, is not a
 * message). Resolves { messages, complete, startedAt, firstAt, endAt }; `lines: true` also returns every line's text
 * (not on a timed run).
 */
export function ndjsonReplay({ base, venue, ticker, window, key, lines = false }) {
  return new Promise((resolve, reject) => {
    const url = `${base}/api/${venue.exchange}/replay/${encodeURIComponent(ticker)}?${windowQuery(window)}`;
    const startedAt = performance.now();
    const req = http.get(url, { agent, headers: { 'X-API-Key': key } }, (res) => {
      if (res.statusCode !== 200) {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => reject(new Error(`NDJSON replay ${res.statusCode}: ${body.slice(0, 300)}`)));
        return;
      }
      let newlines = 0;
      let firstAt = NaN;
      let tail = Buffer.alloc(0);
      const kept = [];
      res.on('data', (chunk) => {
        if (newlines === 0 && Number.isNaN(firstAt)) firstAt = performance.now();
        for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) newlines++;
        if (lines) kept.push(chunk);
        tail = chunk.length >= 200 ? chunk.subarray(chunk.length - 200) : Buffer.concat([tail, chunk]).subarray(-200);
      });
      res.on('end', () => {
        const endAt = performance.now();
        const text = tail.toString('utf8');
        const lineCount = newlines + (text.endsWith('\n') ? 0 : 1);
        const trimmed = text.trimEnd();
        const last = trimmed.slice(trimmed.lastIndexOf('\n') + 1);
        const end = /^\{"type":"end","count":(\d+)\}$/.exec(last);
        // Complete: the end line, and as many lines before it as it counts.
        const complete = end !== null && Number(end[1]) === lineCount - 1;
        resolve({
          messages: lineCount - 1,
          complete,
          startedAt,
          firstAt,
          endAt,
          ...(lines
            ? {
                lines: Buffer.concat(kept)
                  .toString('utf8')
                  .split('\n')
                  .filter((l) => l !== ''),
              }
            : {}),
        });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}
