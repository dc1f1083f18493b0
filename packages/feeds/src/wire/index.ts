/**
 * The venues' WebSocket messages as each venue writes them, one module per platform (named by its neutral key):
 * written once here, from the strings the venue puts in them, for everyone who speaks a venue's protocol to a client —
 * the venue simulator's feeds and the replay service.
 */
export * from './venue-b';
export * from './venue-c';
export * from './venue-a-us';
export * from './venue-a-clob';
export * from './venue-d';
export { jsonObject } from './json';
