import { describe, expect, it } from 'vitest';
import { attemptDecision, FAILED_ATTEMPT_WINDOW_MS, MAX_FAILED_ATTEMPTS, verdict } from '../../../../src/domain/banks/verification.ts';

describe('verdict', () => {
  it.each([
    [true, 'match', true, []],
    [false, 'match', false, ['account_number']],
    [true, 'partial', false, ['holder_name']],
    [true, 'mismatch', false, ['holder_name']],
    [false, 'mismatch', false, ['account_number', 'holder_name']],
  ] as const)('number matches: %s, name %s → verified %s, failed %j', (numberMatches, outcome, verified, failedChecks) => {
    expect(verdict(numberMatches, { score: 0.5, outcome })).toEqual({ verified, failedChecks });
  });
});

describe('attemptDecision', () => {
  const now = new Date('2026-11-21T18:00:00.000Z');
  const minutesAgo = (m: number) => new Date(now.getTime() - m * 60_000).toISOString();

  it('allows attempts while fewer than five failures are in the last hour', () => {
    expect(attemptDecision([], now)).toEqual({ allowed: true });
    expect(attemptDecision([minutesAgo(1), minutesAgo(2), minutesAgo(3), minutesAgo(4)], now)).toEqual({ allowed: true });
  });

  it('refuses after five failures in the hour, until the oldest of them is an hour old', () => {
    const failures = [minutesAgo(50), minutesAgo(40), minutesAgo(30), minutesAgo(20), minutesAgo(10)];
    expect(MAX_FAILED_ATTEMPTS).toBe(5);
    expect(attemptDecision(failures, now)).toEqual({ allowed: false, retryAfterSeconds: 10 * 60 });
  });

  it('ignores failures older than the hour', () => {
    const failures = [minutesAgo(61), minutesAgo(90), minutesAgo(40), minutesAgo(30), minutesAgo(20), minutesAgo(10)];
    expect(attemptDecision(failures, now)).toEqual({ allowed: true });
  });

  it('with more than five failures waits for enough of them to age out', () => {
    const failures = [minutesAgo(55), minutesAgo(50), minutesAgo(40), minutesAgo(30), minutesAgo(20), minutesAgo(10)];
    expect(attemptDecision(failures, now)).toEqual({ allowed: false, retryAfterSeconds: 10 * 60 });
  });

  it('never asks to wait less than a second', () => {
    const justInside = new Date(now.getTime() - FAILED_ATTEMPT_WINDOW_MS + 10).toISOString();
    expect(attemptDecision([justInside, justInside, justInside, justInside, justInside], now)).toEqual({ allowed: false, retryAfterSeconds: 1 });
  });
});
