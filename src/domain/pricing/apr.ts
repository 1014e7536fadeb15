/**
 * The APR of a loan's payment stream (level payments, then the adjusted last one): the unit-period
 * rate of Regulation Z, Appendix J (b) (12 CFR 1026), a month here, times 12. The stated APR
 * (percent, three decimals, half-up) is the one the house's Appendix J search states: Newton from
 * below, stopped on a confirmed bracket [x, x + 10^−9] a month, its lower end rounded
 * (aprFixedPoint.ts says why that can differ from the root's own rounding, and runs it exactly).
 *
 * Binary floating point settles almost every stream. That search's answer is the rounding of some
 * y within 1.2·10^−3 of y* = i* × 1,200,000 (thousandths of a point, i* the exact root). Here
 * Newton's method in doubles finds x, and two evaluations prove i* ∈ (x − δ, x + δ) with
 * δ × 1,200,000 = 10^−3 (the present value changes sign across them by some 10^−9 of the amount
 * financed, a million times the error of a double evaluation). When no half-thousandth boundary
 * lies within 2.3·10^−3 of x × 1,200,000, every candidate rounds to the same thousandth;
 * otherwise (about one quote in two hundred) the search runs in integer fixed point instead.
 *
 * Present value at monthly rate i of m level payments a and a last payment b, the first one month
 * out: PV = a·(1 − v^m)/i + b·v^(m+1), v = 1/(1 + i); 1 − v^m = −expm1(−m·log1p(i)) keeps full
 * relative precision however small m·i is. PV is convex and decreasing, so Newton from below
 * (the note rate, a lower bound when prepaid finance charges are non-negative, or 0) climbs to the
 * root without overshooting.
 */
import { solveAprFixedPoint } from './aprFixedPoint.ts';

/** A monthly rate × this is the APR in thousandths of a percentage point. */
const THOUSANDTHS_PER_MONTHLY = 1_200_000;
/** Half-width of the proven bracket around the root, per month: 10^−3 thousandths a year. */
const DELTA = 1e-3 / THOUSANDTHS_PER_MONTHLY;
/** How far from a half-thousandth the root must be: the bracket, the search's 10^−9 per month (1.2·10^−3), and slack. */
const WINDOW = 2.3e-3;
const MAX_NEWTON_STEPS = 100;

export interface PaymentStream {
  /** Amount financed, in cents (> 0). */
  amountFinancedCents: number;
  /** The level payment in cents and how many of them come first. */
  levelPaymentCents: number;
  levelCount: number;
  /** The final payment in cents, one month after the last level one. */
  lastPaymentCents: number;
}

/** f(i) = PV(i) − amount financed, and f′(i). */
function valueAndSlope(s: PaymentStream, i: number): [number, number] {
  const a = s.levelPaymentCents;
  const m = s.levelCount;
  const b = s.lastPaymentCents;
  if (i === 0) return [a * m + b - s.amountFinancedCents, -(a * m * (m + 1)) / 2 - b * (m + 1)];
  const w = Math.log1p(i);
  const annuity = -Math.expm1(-m * w) / i; // (1 − v^m) / i
  const v = Math.exp(-w);
  const vLast = Math.exp(-(m + 1) * w); // v^(m+1)
  const value = a * annuity + b * vLast - s.amountFinancedCents;
  // d/di (1 − v^m)/i = (m·v^(m+1) − (1 − v^m)/i) / i;  d/di v^(m+1) = −(m+1)·v^(m+2)
  const slope = (a * (m * vLast - annuity)) / i - b * (m + 1) * vLast * v;
  return [value, slope];
}

/**
 * The stated APR in thousandths of a percentage point (6611 for 6.611 %), equal to what
 * Appendix J search states for the same stream and hint. `noteRateThousandths` is the hint
 * (the note rate, or 0 for none).
 */
export function aprThousandths(stream: PaymentStream, noteRateThousandths: number): number {
  const fast = solveInDoubles(stream, noteRateThousandths);
  return fast ?? solveExactly(stream, noteRateThousandths);
}

/** The rounded APR when doubles settle it beyond doubt, else null (exported for the tests that pin the fallback). */
export function solveInDoubles(s: PaymentStream, noteRateThousandths: number): number | null {
  const { amountFinancedCents: financed, levelPaymentCents: a, levelCount: m, lastPaymentCents: b } = s;
  const integers = [financed, a, m, b, noteRateThousandths].every(Number.isSafeInteger);
  if (!integers || financed <= 0 || a < 0 || m < 0 || b < 0 || a * m + b > Number.MAX_SAFE_INTEGER) return null;
  const total = a * m + b; // exact
  if (total < financed) return null; // no non-negative APR: the fixed-point search says so, in its words
  if (total === financed) return 0; // PV(0) equals the amount financed exactly

  let x = 0;
  const hint = noteRateThousandths / THOUSANDTHS_PER_MONTHLY;
  let here = valueAndSlope(s, 0);
  if (hint > 0) {
    const atHint = valueAndSlope(s, hint);
    if (atHint[0] >= 0) {
      x = hint;
      here = atHint;
    }
  }
  for (let step = 0; step < MAX_NEWTON_STEPS && here[0] !== 0; step++) {
    const [f, slope] = here;
    if (!(slope < 0)) return null;
    const next = x - f / slope;
    if (!Number.isFinite(next)) return null;
    const moved = Math.abs(next - x);
    x = next;
    if (moved <= x * 1e-15) break;
    here = valueAndSlope(s, x);
  }
  // Prove the root lies in (x − δ, x + δ): PV − financed ≥ 0 below it and < 0 above it.
  const lo = x - DELTA;
  if (lo >= 0 && !(valueAndSlope(s, lo)[0] > 0)) return null;
  if (!(valueAndSlope(s, x + DELTA)[0] < 0)) return null;
  const y = x * THOUSANDTHS_PER_MONTHLY;
  const rounded = Math.floor(y + 0.5);
  // Every value within WINDOW of y rounds half-up to the same thousandth.
  if (y - WINDOW >= rounded - 0.5 && y + WINDOW < rounded + 0.5) return rounded;
  return null;
}

/** The same Appendix J search in integer fixed point (aprFixedPoint.ts), for what the doubles leave open. */
function solveExactly(s: PaymentStream, noteRateThousandths: number): number {
  const runs = [
    { amountCents: s.levelPaymentCents, count: s.levelCount },
    { amountCents: s.lastPaymentCents, count: 1 },
  ];
  return solveAprFixedPoint(s.amountFinancedCents, runs, noteRateThousandths);
}
