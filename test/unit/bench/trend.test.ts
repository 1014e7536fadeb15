import { describe, expect, it } from 'vitest';
import { trendDrift } from '../../../scripts/bench/trend.ts';

describe('trendDrift (the soak\'s drift over every minute after the warm-up)', () => {
  it('reads a steady rise as its full size', () => {
    expect(trendDrift([100, 110, 120, 130, 140])).toBeCloseTo(0.4, 10);
  });

  it('reads a steady fall as a negative drift', () => {
    expect(trendDrift([200, 190, 180, 170, 160])).toBeCloseTo(-0.2, 10);
  });

  it('is not moved much by one noisy minute at the end of a flat series', () => {
    const flat = [30, 31, 29, 30, 30, 31, 29, 30, 30, 43];
    // One minute at +43 % against the first: the single-minute comparison would read +43 %.
    expect(Math.abs(trendDrift(flat))).toBeLessThan(0.05);
  });

  it('still sees a leak that grows every minute, however noisy', () => {
    const leak = Array.from({ length: 18 }, (_, i) => 400 + i * 5 + (i % 2 === 0 ? 8 : -8));
    expect(trendDrift(leak)).toBeGreaterThan(0.15);
  });

  it('sees a throughput that fell by a fifth halfway and stayed there', () => {
    const step = [...Array.from({ length: 10 }, () => 100), ...Array.from({ length: 10 }, () => 80)];
    expect(trendDrift(step)).toBeLessThan(-0.1);
  });

  it('is 0 for fewer than two minutes', () => {
    expect(trendDrift([])).toBe(0);
    expect(trendDrift([5])).toBe(0);
  });
});
