export { createHandler, type GatewayDeps } from './app';
export { loadConfig, gatewayEnvSchema, type GatewayConfig } from './config';
export { GatewayMetrics } from './metrics';
export { createPlatforms, type Platforms } from './platforms/registry';
export { UpstreamBudgets } from './proxy/budget';
export { Forwarder } from './proxy/forwarder';
export { startKeepAlives } from './keep-alive';
export { startGateway, type RunningGateway } from './server';
