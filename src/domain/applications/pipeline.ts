/**
 * The overview's pipeline at a glance, as pure functions: decisions counted per UTC day over the
 * last days, and the bars of the chart that shows them (server-rendered SVG: the geometry is
 * computed here, the view only draws it, so the page needs no script and no inline style).
 */

type DecisionOutcome = 'approved' | 'declined' | 'referred';
const DECISION_OUTCOMES: readonly DecisionOutcome[] = ['approved', 'referred', 'declined'];

export interface DayOfDecisions {
  /** The UTC date, `YYYY-MM-DD`. */
  date: string;
  approved: number;
  referred: number;
  declined: number;
  total: number;
}

const DAY_MS = 86_400_000;

/** The first moment of the window of `days` UTC days that ends with today's (inclusive). */
export function windowStart(now: Date, days: number): Date {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return new Date(today - (days - 1) * DAY_MS);
}

/**
 * Decisions per UTC day, oldest day first, one entry for each of the `days` days ending today
 * (days without a decision count zero); decisions outside the window, or of another outcome, are left out.
 */
export function decisionsPerDay(decisions: ReadonlyArray<{ decidedAt: string; outcome: string }>, now: Date, days: number): DayOfDecisions[] {
  const start = windowStart(now, days).getTime();
  const result: DayOfDecisions[] = Array.from({ length: days }, (_, i) => ({
    date: new Date(start + i * DAY_MS).toISOString().slice(0, 10),
    approved: 0,
    referred: 0,
    declined: 0,
    total: 0,
  }));
  for (const decision of decisions) {
    const index = Math.floor((Date.parse(decision.decidedAt) - start) / DAY_MS);
    const day = result[index];
    if (!day || !(DECISION_OUTCOMES as readonly string[]).includes(decision.outcome)) continue;
    day[decision.outcome as DecisionOutcome] += 1;
    day.total += 1;
  }
  return result;
}

interface Bar {
  date: string;
  outcome: DecisionOutcome;
  count: number;
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface BarChart {
  width: number;
  height: number;
  /** The largest day's total, the top of the scale. */
  max: number;
  bars: Bar[];
  /** Where each day's label sits (every `labelEvery`th day, and the last). */
  labels: Array<{ x: number; text: string }>;
}

/**
 * Stacked bars, one column per day, approved at the bottom, then referred, then declined, scaled
 * so the busiest day fills the plot height. Heights are whole pixels of `plotHeight`; a day with
 * no decision has no bar.
 */
export function stackedBars(days: readonly DayOfDecisions[], plot: { width: number; height: number; labelEvery: number }): BarChart {
  const max = Math.max(0, ...days.map((d) => d.total));
  const column = days.length === 0 ? 0 : plot.width / days.length;
  const barWidth = Math.max(1, Math.floor(column * 0.8));
  const bars: Bar[] = [];
  days.forEach((day, i) => {
    let top = plot.height;
    for (const outcome of DECISION_OUTCOMES) {
      const count = day[outcome];
      if (count === 0 || max === 0) continue;
      const height = Math.max(1, Math.round((count / max) * plot.height));
      top -= height;
      bars.push({ date: day.date, outcome, count, x: Math.round(i * column), y: Math.max(0, top), width: barWidth, height });
    }
  });
  const labels = days
    .map((day, i) => ({ i, day }))
    .filter(({ i }) => i % plot.labelEvery === 0 || i === days.length - 1)
    .map(({ i, day }) => ({ x: Math.round(i * column), text: day.date.slice(5) }));
  return { width: plot.width, height: plot.height, max, bars, labels };
}

/** Succeeded attempts over all attempts, in percent with one decimal; null when there were none. */
export function successRate(succeeded: number, failed: number): number | null {
  const total = succeeded + failed;
  return total === 0 ? null : Math.round((succeeded / total) * 1000) / 10;
}
