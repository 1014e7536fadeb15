import { describe, expect, it } from 'vitest';
import { LoopPace, loopDueAt, parseRate } from '../../../scripts/bench/pace.ts';

describe('the soak\'s pace (loops at a fixed rate, timed from when they were due)', () => {
  it('spaces loops evenly from the start', () => {
    expect([0, 1, 2, 25].map((k) => loopDueAt(k, 25, 1000))).toEqual([1000, 1040, 1080, 2000]);
  });

  it('hands a late client the time its loop was due, not the time it asked, and does not wait', async () => {
    const pace = new LoopPace(10, 0);
    // The clients ask 5 s in: loops 0..2 were due at 0, 100 and 200 ms.
    const asked = performance.now();
    const dues = [await pace.next(() => 5000), await pace.next(() => 5000), await pace.next(() => 5000)];
    expect(dues).toEqual([0, 100, 200]);
    expect(performance.now() - asked).toBeLessThan(1000);
  });

  it('waits for a loop that is not due yet', async () => {
    const start = performance.now();
    const pace = new LoopPace(20, start);
    await pace.next();
    const due = await pace.next();
    expect(due).toBeCloseTo(start + 50, 6);
    expect(performance.now()).toBeGreaterThanOrEqual(due - 1);
  });

  it('runs loops unpaced before the paced part begins (the warm-up), then paces them from its start', async () => {
    const pace = new LoopPace(10, 60_000);
    expect(await pace.next(() => 1_000)).toBe(1_000);
    expect(await pace.next(() => 59_999)).toBe(59_999);
    expect(await pace.next(() => 60_500)).toBe(60_000);
    expect(await pace.next(() => 60_500)).toBe(60_100);
  });

  it('without a rate, every loop is due when it is asked for', async () => {
    const pace = new LoopPace(null, 0);
    expect(await pace.next(() => 1234)).toBe(1234);
    expect(await pace.next(() => 1300)).toBe(1300);
  });

  it('reads SOAK_RATE: a number, max, or the default; refuses anything else', () => {
    expect(parseRate(undefined, 25)).toBe(25);
    expect(parseRate('', 25)).toBe(25);
    expect(parseRate('12.5', 25)).toBe(12.5);
    expect(parseRate('MAX', 25)).toBeNull();
    for (const bad of ['0', '-3', 'fast', 'Infinity']) expect(() => parseRate(bad, 25)).toThrow(/SOAK_RATE/);
  });
});
