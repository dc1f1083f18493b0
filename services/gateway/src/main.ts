import { setFlagsFromString } from 'node:v8';
import { createLogger, runMain } from '@depthgate/service-kit';
import { loadConfig } from './config';
import { startGateway } from './server';

// V8's allocation-site pretenuring, once it decides (under the first burst of concurrent requests) that the objects
// of some allocation site live long, allocates them in the old generation from then on: each request's short-lived
// objects are then born old, keep their young children alive through every scavenge until the next full collection,
// and the process runs a mark-compact every 0.3–1 s for the rest of its life instead of every 10–30 s. 17 of 44
// gateway processes started by the A/B benchmark fell into that state, with about twice the GC pauses and a higher
// REST p99; none of 36 without pretenuring (docs/benchmarks.md, "GC modes"; `./dev bench gateway --ab`). Set here
// rather than on the command line (NODE_OPTIONS refuses V8 flags) so that every way of starting the gateway process
// has it: its image, ./dev up, the benchmarks (tests that start the gateway in their own process do not).
setFlagsFromString('--no-allocation-site-pretenuring');

runMain(async () => {
  const config = loadConfig();
  await startGateway(config, { logger: createLogger({ name: 'gateway', level: config.LOG_LEVEL }) });
});
