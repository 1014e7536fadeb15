/**
 * The request log's per-minute budget (src/domain/limits/requestLogBudget.ts): an environment's
 * first `perMinute` entries of a minute are stored, the rest counted, and the last of them becomes
 * the minute's marker once the minute is over (closed by a later entry of the same environment or
 * by `close`), with how many there were and when the first arrived; environments do not share it.
 */
import { describe, expect, it } from 'vitest';
import { MINUTE_MS, RequestLogBudget } from '../../../../src/domain/limits/requestLogBudget.ts';

const T0 = Date.parse('2026-12-01T10:00:00.000Z');
const entry = (accountId: string, arrivedAt: number, n = 0) => ({ accountId, arrivedAt, n });

describe('the request log budget', () => {
  it('stores the first perMinute entries of a minute and counts the rest on a marker, the last of them', () => {
    const budget = new RequestLogBudget<ReturnType<typeof entry>>(3);
    const stored = [0, 1, 2, 3, 4, 5].map((n) => budget.take(entry('acc-a', T0 + n * 1000, n)));
    expect(stored.map((t) => t.store)).toEqual([true, true, true, false, false, false]);
    expect(stored.every((t) => t.closed === null)).toBe(true);
    expect(budget.close(T0 + MINUTE_MS - 1)).toEqual([]); // the minute is not over
    expect(budget.close(T0 + MINUTE_MS)).toEqual([{ entry: entry('acc-a', T0 + 5000, 5), omitted: { count: 3, firstAt: T0 + 3000 } }]);
    expect(budget.close(T0 + 2 * MINUTE_MS)).toEqual([]); // closed once
  });

  it("gives each environment its own budget, and a new minute a new one, closing the last minute's marker", () => {
    const budget = new RequestLogBudget<ReturnType<typeof entry>>(1);
    expect(budget.take(entry('acc-a', T0)).store).toBe(true);
    expect(budget.take(entry('acc-a', T0 + 1, 1)).store).toBe(false);
    expect(budget.take(entry('acc-a.test', T0 + 2)).store).toBe(true);
    const next = budget.take(entry('acc-a', T0 + MINUTE_MS, 2));
    expect(next).toEqual({ store: true, closed: { entry: entry('acc-a', T0 + 1, 1), omitted: { count: 1, firstAt: T0 + 1 } } });
    // A minute with nothing past the budget closes without a marker.
    expect(budget.close(Infinity)).toEqual([]);
  });

  it('counts a late entry of an earlier minute against the current one', () => {
    const budget = new RequestLogBudget<ReturnType<typeof entry>>(1);
    budget.take(entry('acc-a', T0 + MINUTE_MS));
    expect(budget.take(entry('acc-a', T0 + MINUTE_MS - 5, 1))).toEqual({ store: false, closed: null });
    expect(budget.close(Infinity)).toEqual([{ entry: entry('acc-a', T0 + MINUTE_MS - 5, 1), omitted: { count: 1, firstAt: T0 + MINUTE_MS - 5 } }]);
  });
});
