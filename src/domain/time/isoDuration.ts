/**
 * ISO 8601 durations (`P31D`, `PT36H`, `P1Y2M3DT4H5M6S`) as a number of milliseconds, for the test
 * clock. Calendar units have no fixed length, so a year counts as 365 days and a month as 30 (the
 * test clock moves an offset, not a calendar date). Fractions and negative durations are refused.
 */
const PATTERN = /^P(?!$)(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?(?:T(?=\d)(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$/;

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const UNIT_MS = [365 * DAY, 30 * DAY, 7 * DAY, DAY, HOUR, MINUTE, SECOND] as const;

/** The longest duration the test clock is moved by at once, and in all: ten years of 365 days. */
export const MAX_DURATION_MS = 10 * 365 * DAY;

export type DurationOutcome = { ok: true; ms: number } | { ok: false; message: string };

/** The duration's length in milliseconds, or why it is refused (not ISO 8601, zero, or above `maxMs`). */
export function parseIsoDuration(text: string, maxMs: number = MAX_DURATION_MS): DurationOutcome {
  const match = PATTERN.exec(text);
  if (!match) return { ok: false, message: 'must be an ISO 8601 duration of whole units, such as P31D or PT36H' };
  let ms = 0;
  for (let k = 0; k < UNIT_MS.length; k++) {
    const digits = match[k + 1];
    if (digits === undefined) continue;
    if (digits.length > 6) return { ok: false, message: 'is longer than ten years' };
    ms += Number(digits) * UNIT_MS[k]!;
  }
  if (ms <= 0) return { ok: false, message: 'must be a positive duration' };
  if (ms > maxMs) return { ok: false, message: 'is longer than ten years' };
  return { ok: true, ms };
}
