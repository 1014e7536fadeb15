import { describe, expect, it } from 'vitest';
import { cutIntervalMs, RecentWrites } from '../../../../src/store/sqljs/archive/cutInterval.ts';

describe('the archive cut interval', () => {
  it('is half the delay while file writes are quick', () => {
    expect(cutIntervalMs(1000, 0)).toBe(500);
    expect(cutIntervalMs(1000, 250)).toBe(500);
  });

  it('leaves room for the write ahead and its own when writes slow down, so cut + 2 writes stays within the delay', () => {
    expect(cutIntervalMs(1000, 300)).toBe(400);
    expect(cutIntervalMs(1000, 400)).toBe(200);
    for (const write of [260, 310, 377, 449]) expect(cutIntervalMs(1000, write) + 2 * write).toBeLessThanOrEqual(1000);
  });

  it('never cuts more often than a tenth of the delay, however slow the disk (files would only get smaller)', () => {
    expect(cutIntervalMs(1000, 450)).toBe(100);
    expect(cutIntervalMs(1000, 5000)).toBe(100);
    expect(cutIntervalMs(5, 0)).toBe(2);
    expect(cutIntervalMs(1, 10)).toBe(1);
  });

  it('plans for the slowest of the last sixteen writes and forgets older ones', () => {
    const writes = new RecentWrites();
    expect(writes.slowest).toBe(0);
    writes.add(40);
    writes.add(700);
    writes.add(90);
    expect(writes.slowest).toBe(700);
    for (let i = 0; i < 15; i++) writes.add(20);
    expect(writes.slowest).toBe(90);
    writes.add(20);
    expect(writes.slowest).toBe(20);
  });
});
