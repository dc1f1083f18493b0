// Builds the Explorer page into packages/explorer/dist (vite.config.mts). Run by the root `pnpm build`
// after `tsc -b` (the page imports @depthgate/client's ES module build) and by services/history/Dockerfile.
import { fileURLToPath } from 'node:url';
import { build } from 'vite';

await build({ configFile: fileURLToPath(new URL('./vite.config.mts', import.meta.url)) });
