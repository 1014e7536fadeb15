/** ISO 8601 durations for the test clock: whole units, positive, at most ten years. */
import { describe, expect, it } from 'vitest';
import { MAX_DURATION_MS, parseIsoDuration } from '../../../../src/domain/time/isoDuration.ts';

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;

describe('parseIsoDuration', () => {
  it.each([
    ['P31D', 31 * D],
    ['PT36H', 36 * H],
    ['P1W', 7 * D],
    ['P1M', 30 * D],
    ['P1Y', 365 * D],
    ['PT90S', 90 * S],
    ['P1Y2M3DT4H5M6S', 365 * D + 60 * D + 3 * D + 4 * H + 5 * M + 6 * S],
    ['P10Y', MAX_DURATION_MS],
  ])('%s is %i ms', (text, ms) => {
    expect(parseIsoDuration(text)).toEqual({ ok: true, ms });
  });

  it.each(['', 'P', 'PT', '31D', 'P1DT', 'P-1D', '-P1D', 'P1.5D', 'P1,5D', 'p1d', 'P1D ', 'PT1D', 'P1H'])('%j is not a duration of whole units', (text) => {
    expect(parseIsoDuration(text)).toMatchObject({ ok: false, message: expect.stringContaining('ISO 8601') });
  });

  it('refuses zero and more than ten years', () => {
    expect(parseIsoDuration('P0D')).toEqual({ ok: false, message: 'must be a positive duration' });
    expect(parseIsoDuration('PT0S')).toEqual({ ok: false, message: 'must be a positive duration' });
    expect(parseIsoDuration('P10YT1S')).toEqual({ ok: false, message: 'is longer than ten years' });
    expect(parseIsoDuration('P99999999999D')).toEqual({ ok: false, message: 'is longer than ten years' });
    expect(parseIsoDuration('PT2H', H)).toEqual({ ok: false, message: 'is longer than ten years' });
  });
});
