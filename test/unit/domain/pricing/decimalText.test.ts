import { Decimal } from 'decimal.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { centsText, decimalText, fixedTwo, thousandthsText } from '../../../../src/domain/pricing/decimalText.ts';
import { Dec } from '../../../reference/pricing/decimal.ts';

/** Numbers as pricing meets them: amounts with cents, percentages with thousandths, and any double within the oracle's plain notation. */
const numbers = fc.oneof(
  fc.integer({ min: -99_999_999_999, max: 99_999_999_999 }).map((c) => c / 100),
  fc.integer({ min: -150_000, max: 150_000 }).map((t) => t / 1000),
  fc.double({ min: 1e-40, max: 1e40, noNaN: true }),
  fc.double({ min: -1e40, max: -1e-40, noNaN: true }),
);

describe('decimalText and fixedTwo', () => {
  it('write a JSON number as the oracle’s decimal wrote it (toString, toFixed(2) half-up)', () => {
    fc.assert(
      fc.property(numbers, (value) => {
        expect(decimalText(value)).toBe(new Dec(value).toString());
        expect(fixedTwo(value)).toBe(new Dec(value).toFixed(2));
      }),
      { numRuns: 20_000, examples: [[0], [-0], [97], [6.125], [1e21], [1.2345e25], [0.125], [-0.125], [9.995], [0.005], [0.004], [1e-7], [350_000.29], [0.1 + 0.2], [-1e-14]] },
    );
  });
});

describe('centsText and thousandthsText', () => {
  it('write integer cents and thousandths as the exact decimals the oracle wrote', () => {
    fc.assert(
      fc.property(fc.integer({ min: -(2 ** 53) + 1, max: 2 ** 53 - 1 }), (n) => {
        expect(centsText(n)).toBe(new Decimal(n).div(100).toFixed(2));
        expect(thousandthsText(n)).toBe(new Dec(n).div(1000).toString());
      }),
      { numRuns: 20_000, examples: [[0], [5], [-5], [97_000], [116_667], [9_007_199_254_740_991]] },
    );
  });
});
