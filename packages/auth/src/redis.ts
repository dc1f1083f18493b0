/** The Redis client moved to @depthgate/service-kit (the recorder uses it too); re-exported for this package's users. */
export {
  connectionOptions,
  createRedisClient,
  redisTarget,
  waitForRedis,
  type Redis,
  type RedisClientOptions,
  type RedisTarget,
} from '@depthgate/service-kit';
