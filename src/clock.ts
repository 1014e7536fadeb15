/** The time source. Injected everywhere a decision depends on "now", so tests can fake it. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
