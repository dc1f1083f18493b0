export { createApp, type HistoryDeps } from './app';
export { loadConfig, historyEnvSchema, type HistoryConfig } from './config';
