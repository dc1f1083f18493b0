import { readFileSync } from 'node:fs';
import { HistoryClient as New } from '@depthgate/client';
const Old = (await import('/tmp/client-before/esm/index.js')).HistoryClient;
const env = Object.fromEntries(readFileSync('/tmp/cb/svc.env', 'utf8').trim().split(' ').map((kv) => kv.split('=')));
const { exchange, ticker, from, to } = JSON.parse(readFileSync('/tmp/cb/meta.json', 'utf8'));
const mk = (C: any) => new C({ baseUrl: env.HISTORY_URL, apiKey: env.KEY });
const clients = { old: mk(Old), new: mk(New) };
async function run(c: any) { const t = performance.now(); let n = 0; for await (const e of c.replay(exchange, ticker, { from, to })) if (e.type === 'book') n++; const first = 0; return { ms: performance.now() - t, n }; }
async function firstEvent(c: any) { const t = performance.now(); const it = c.replay(exchange, ticker, { from, to }); await it.next(); const ms = performance.now() - t; await it.return(); return ms; }
const res: Record<string, number[]> = { old: [], new: [], oldFirst: [], newFirst: [] };
for (let r = 0; r < 44; r++) {
  for (const k of (r % 2 ? ['old', 'new'] : ['new', 'old']) as ('old' | 'new')[]) {
    const a = await run(clients[k]); const f = await firstEvent(clients[k]);
    if (r >= 4) { res[k].push(a.ms); res[k + 'First'].push(f); }
  }
}
const med = (x: number[]) => [...x].sort((a, b) => a - b)[x.length >> 1];
for (const k of Object.keys(res)) console.log(k, med(res[k]).toFixed(1), 'ms');
