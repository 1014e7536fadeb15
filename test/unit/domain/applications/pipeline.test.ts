import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decisionsPerDay, stackedBars, successRate, windowStart } from '../../../../src/domain/applications/pipeline.ts';

const NOW = new Date('2026-11-21T15:30:00.000Z');

describe('decisions per day', () => {
  it('one entry per UTC day of the window, oldest first, ending today; empty days count zero', () => {
    const days = decisionsPerDay(
      [
        { decidedAt: '2026-11-21T00:00:00.000Z', outcome: 'approved' },
        { decidedAt: '2026-11-21T23:59:59.999Z', outcome: 'declined' },
        { decidedAt: '2026-11-20T23:59:59.999Z', outcome: 'referred' },
        { decidedAt: '2026-10-23T00:00:00.000Z', outcome: 'approved' }, // the window's first day
        { decidedAt: '2026-10-22T23:59:59.999Z', outcome: 'approved' }, // before the window
        { decidedAt: '2026-11-21T10:00:00.000Z', outcome: 'withdrawn' }, // not a decision outcome
      ],
      NOW,
      30,
    );
    expect(days).toHaveLength(30);
    expect(days[0]).toEqual({ date: '2026-10-23', approved: 1, referred: 0, declined: 0, total: 1 });
    expect(days.at(-2)).toEqual({ date: '2026-11-20', approved: 0, referred: 1, declined: 0, total: 1 });
    expect(days.at(-1)).toEqual({ date: '2026-11-21', approved: 1, referred: 0, declined: 1, total: 2 });
    expect(windowStart(NOW, 30).toISOString()).toBe('2026-10-23T00:00:00.000Z');
  });

  it('counts every decision of the window exactly once', () => {
    const start = windowStart(NOW, 30).getTime();
    const decision = fc.record({
      decidedAt: fc.integer({ min: start, max: NOW.getTime() }).map((t) => new Date(t).toISOString()),
      outcome: fc.constantFrom('approved', 'referred', 'declined'),
    });
    fc.assert(
      fc.property(fc.array(decision, { maxLength: 50 }), (decisions) => {
        const days = decisionsPerDay(decisions, NOW, 30);
        expect(days.reduce((n, d) => n + d.total, 0)).toBe(decisions.length);
        for (const d of days) expect(d.approved + d.referred + d.declined).toBe(d.total);
      }),
    );
  });
});

describe('the stacked bar chart', () => {
  const plot = { width: 300, height: 100, labelEvery: 7 };
  it('the busiest day fills the plot height; segments stack from the bottom, approved first', () => {
    const chart = stackedBars(
      [
        { date: '2026-11-20', approved: 1, referred: 1, declined: 0, total: 2 },
        { date: '2026-11-21', approved: 2, referred: 1, declined: 1, total: 4 },
      ],
      plot,
    );
    expect(chart.max).toBe(4);
    const busiest = chart.bars.filter((b) => b.date === '2026-11-21');
    expect(busiest.map((b) => [b.outcome, b.y, b.height])).toEqual([
      ['approved', 50, 50],
      ['referred', 25, 25],
      ['declined', 0, 25],
    ]);
    expect(chart.bars.filter((b) => b.date === '2026-11-20').map((b) => [b.outcome, b.height])).toEqual([
      ['approved', 25],
      ['referred', 25],
    ]);
    expect(chart.labels).toEqual([
      { x: 0, text: '11-20' },
      { x: 150, text: '11-21' },
    ]);
  });

  it('every bar stays inside the plot, and no day has a bar without decisions', () => {
    const day = fc.record({ approved: fc.nat(20), referred: fc.nat(20), declined: fc.nat(20) }).map((d) => ({ date: '2026-11-21', ...d, total: d.approved + d.referred + d.declined }));
    fc.assert(
      fc.property(fc.array(day, { minLength: 1, maxLength: 30 }), (days) => {
        const chart = stackedBars(days, plot);
        for (const bar of chart.bars) {
          expect(bar.count).toBeGreaterThan(0);
          expect(bar.y).toBeGreaterThanOrEqual(0);
          expect(bar.x + bar.width).toBeLessThanOrEqual(plot.width);
        }
        expect(chart.bars.length).toBe(days.reduce((n, d) => n + [d.approved, d.referred, d.declined].filter((c) => c > 0).length, 0));
      }),
    );
  });
});

describe('the webhook delivery success rate', () => {
  it('is a percentage with one decimal, or null without attempts', () => {
    expect(successRate(0, 0)).toBeNull();
    expect(successRate(2, 1)).toBe(66.7);
    expect(successRate(5, 0)).toBe(100);
  });
});
