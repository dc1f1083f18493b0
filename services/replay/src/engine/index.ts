/**
 * The replay engine: one ticker's recorded window → the venue's own WebSocket messages (replay.ts drives, one encoder
 * per recorded exchange writes them through @depthgate/feeds' wire module).
 */
export * from './types';
export { ReplayBook, formatPlaces, type Places } from './replay-book';
export {
  replay,
  replayPaged,
  PageWait,
  applyDelta,
  type PagedWindow,
  type WindowPage,
  type BookCause,
  type EncodedText,
  type VenueEncoder,
} from './replay';
export { kalshiEncoder, type KalshiEncoderOptions, type KalshiSubscription } from './venue-b';
export { geminiEncoder, type GeminiEncoderOptions } from './venue-c';
export { pmUsEncoder, type PmUsEncoderOptions } from './venue-a-us';
export { clobEncoder, CLOB_ASSUMED, type ClobEncoderOptions } from './venue-a-clob';
export { coinbaseEncoder, type CoinbaseEncoderOptions } from './venue-d';
export { sliced, slicesOf } from './slices';
export { mergeByClock, paced, type ClockField, type MergedMessage, type PaceOptions } from './clock';
