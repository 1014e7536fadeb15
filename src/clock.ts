/** The time source. Injected everywhere a decision depends on "now", so tests can fake it. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** ISO 8601 UTC with milliseconds, the one timestamp format of the API. */
export function isoTimestamp(date: Date): string {
  return date.toISOString();
}
