import { createLogger, runMain } from '@depthgate/service-kit';
import { loadConfig } from './config';
import { startGateway } from './server';

runMain(async () => {
  const config = loadConfig();
  await startGateway(config, { logger: createLogger({ name: 'gateway', level: config.LOG_LEVEL }) });
});
