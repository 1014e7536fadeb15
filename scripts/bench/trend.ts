/**
 * Drift as a trend: the Theil–Sen line (the median of the slopes between every pair of minutes)
 * through a series of per-minute figures, read at its first and last minute. A single minute at
 * each end (what the soak compared first) swings with whatever that minute caught (an export of
 * the grown data, a VACUUM, a checkpoint): on PostgreSQL p99 moved between 27 and 46 ms all through
 * a 20-minute run with no trend, and one pair of minutes read +42 %. The median slope takes every
 * minute after the warm-up into account and is not pulled by a few outlying minutes (a least-squares
 * line is: one minute at the end weighs most), while a real drift (a leak, a table scanned in full,
 * a growing queue) moves every pair and still shows in full.
 */

const median = (sorted: readonly number[]): number => {
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** The line's relative change from the first point to the last (0 with fewer than 2 points, or when the line starts at or below 0). */
export function trendDrift(values: readonly number[]): number {
  const n = values.length;
  if (n < 2) return 0;
  const slopes: number[] = [];
  for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) slopes.push((values[j]! - values[i]!) / (j - i));
  const slope = median(slopes.sort((a, b) => a - b));
  const start = median(values.map((v, i) => v - slope * i).sort((a, b) => a - b));
  const end = start + slope * (n - 1);
  return start > 0 ? end / start - 1 : 0;
}
