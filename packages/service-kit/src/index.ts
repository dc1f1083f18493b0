export * from './errors';
export * from './logger';
export * from './request-context';
export * from './health';
export * from './lifecycle';
export * from './metrics';
export * from './env';
export * from './app';
