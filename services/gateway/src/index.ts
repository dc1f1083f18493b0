export { createHandler, type GatewayDeps } from './app';
export { loadConfig, gatewayEnvNames, gatewayEnvSchema, type GatewayConfig } from './config';
export { GatewayMetrics } from './metrics';
export { createPlatforms, ROUTES, type GatewayPlatforms } from './platforms/registry';
export { UpstreamBudgets } from './proxy/budget';
export { Forwarder } from './proxy/forwarder';
export { startKeepAlives } from './keep-alive';
export { startGateway, type RunningGateway } from './server';
