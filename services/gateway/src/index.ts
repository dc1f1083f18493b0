export { createApp, type GatewayDeps } from './app';
export { loadConfig, gatewayEnvSchema, type GatewayConfig } from './config';
