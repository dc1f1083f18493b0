/** Dates as the platforms print them. */

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];

export const DAY_MS = 24 * 3600 * 1000;

/** `2026-03-07` → epoch ms at 00:00 UTC. */
export function parseDay(day: string): number {
  const ms = Date.parse(`${day}T00:00:00Z`);
  if (Number.isNaN(ms)) throw new Error(`not a date: ${day}`);
  return ms;
}

/** Kalshi's date code: `26MAR07`. */
export function kalshiDate(ms: number): string {
  const d = new Date(ms);
  return `${String(d.getUTCFullYear() % 100).padStart(2, '0')}${MONTHS[d.getUTCMonth()]}${String(d.getUTCDate()).padStart(2, '0')}`;
}

/** `26MAR` */
export function kalshiMonth(ms: number): string {
  const d = new Date(ms);
  return `${String(d.getUTCFullYear() % 100).padStart(2, '0')}${MONTHS[d.getUTCMonth()]}`;
}

/** `2026-03-07` */
export function isoDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** RFC 3339 with seconds only: `2026-03-07T15:00:00Z`. */
export function isoSeconds(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** RFC 3339 with milliseconds: `2026-03-07T15:00:00.123Z`. */
export function isoMillis(ms: number): string {
  return new Date(ms).toISOString();
}

/** RFC 3339 with six fractional digits (Kalshi feed `ts`): `2026-03-07T15:00:00.123000Z`. */
export { isoMicros } from '@depthgate/feeds';

export function monthName(ms: number): string {
  return new Date(ms).toLocaleString('en-US', { month: 'long', timeZone: 'UTC' });
}

export function shortMonthName(ms: number): string {
  return new Date(ms).toLocaleString('en-US', { month: 'short', timeZone: 'UTC' });
}
