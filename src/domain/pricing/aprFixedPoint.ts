/**
 * The APR near a rounding boundary, in integer fixed point: the case the doubles of apr.ts cannot
 * settle (the root lies within a hair of a half-thousandth of a percentage point).
 *
 * The stated APR is not simply the exact root rounded. It is what the Appendix J solve of this
 * house states (12 CFR 1026, Appendix J (b): the monthly rate i at which the present value of the
 * payments equals the amount financed; APR = 12 × i): Newton's method from below (from the note
 * rate when the present value there is still at least the amount financed, else from 0), climbing
 * to the root of the convex, decreasing present value; once a step is shorter than 7·10⁻⁷ a month,
 * one more step gives `next`, and the bracket [next, next + 10⁻⁹] is confirmed by two evaluations
 * (else the search goes on from next + 10⁻⁹); the APR stated is `next` × 1200, rounded half-up
 * to 0.001. Stating the lower end of a bracket of 1.2·10⁻⁶ points is well inside Reg Z's 1/8
 * point tolerance (§ 1026.22(a)(2)), but it can state one thousandth less than the root's own
 * rounding when the root lies just above a half-thousandth; quotes have always stated it so.
 *
 * So this module runs that same search, step for step, on integers scaled by 10⁴⁵: each product
 * and quotient is off by at most one unit of 10⁻⁴⁵, where the decimal oracle this replaced (20
 * significant digits, test/reference/pricing/apr.ts) is off by some 10⁻²³ a month. The two
 * states differ only if `next` lies within about 10⁻¹⁶ thousandths of a half-thousandth, or a
 * stopping test ties as closely: never seen (the tests compare them over every kind of stream).
 */

/** One, in this module's fixed point. */
const SCALE = 10n ** 45n;
/** Width of the confirmed bracket, per month: 10⁻⁹ (1.2·10⁻⁶ percentage points a year). */
const TOLERANCE = 10n ** 36n;
/** A Newton step shorter than this (7·10⁻⁷ a month) is followed by one last step and the bracket check. */
const NEAR = 7n * 10n ** 38n;
/** The smallest starting point of the fallback's bracket search: 0.01 a month. */
const BRACKET_START = 10n ** 43n;
const MAX_NEWTON_STEPS = 60;
const MAX_BRENT_ITERATIONS = 200;
const MAX_BRACKET_DOUBLINGS = 60;

/** `count` equal payments of `amountCents`, one a month, following the runs before it. */
export interface CentsRun {
  amountCents: number;
  count: number;
}

/**
 * The time from consummation to the first payment in Appendix J's unit periods (b)(5): whole
 * months, and odd days counted in thirtieths of a month. A regular first period is one month.
 */
export interface FirstPeriod {
  fullMonths: number;
  oddDays: number;
}

export const REGULAR_FIRST_PERIOD: FirstPeriod = { fullMonths: 1, oddDays: 0 };
const DAYS_PER_UNIT_PERIOD = 30n;

interface Run {
  amount: bigint;
  count: number;
}

const mul = (x: bigint, y: bigint): bigint => (x * y) / SCALE;
const div = (x: bigint, y: bigint): bigint => (x * SCALE) / y;
const abs = (x: bigint): bigint => (x < 0n ? -x : x);

/** v^k in fixed point by squaring (k ≥ 1). */
function power(v: bigint, k: number): bigint {
  let result = SCALE;
  let base = v;
  for (let e = k; e > 0; e >>= 1) {
    if (e & 1) result = mul(result, base);
    if (e > 1) base = mul(base, base);
  }
  return result;
}

/**
 * The equation of Appendix J (b)(8), less the amount financed, and when asked its slope, in
 * cents × SCALE. A run of m payments a after s earlier months is worth a·(v^s − v^(s+m))/i,
 * v = 1/(1 + i); its slope is a·(g′·i − g)/i² with g = v^s − v^(s+m) and
 * g′ = −s·v^(s+1) + (s+m)·v^(s+m+1). At i = 0: a·m and −a·m·(2s + m + 1)/2.
 *
 * An odd first period of full months and d odd days discounts every payment by 1/(1 + f·i) more,
 * f = d/30, and its first payment comes after the whole months (runsOf puts a run of no payment
 * before the others for the months beyond the first). Multiplied through by (1 + f·i), the
 * equation keeps its root and stays convex and decreasing, which the Newton search from below
 * needs: PV(i) − target·(1 + f·i).
 */
function valueAndSlope(runs: readonly Run[], target: bigint, i: bigint, withSlope: boolean, oddDays: bigint): { f: bigint; slope: bigint } {
  const oddTarget = (target * oddDays) / DAYS_PER_UNIT_PERIOD; // target·f
  let before = 0n;
  if (i === 0n) {
    let value = 0n;
    let twiceSlope = 0n;
    for (const run of runs) {
      const count = BigInt(run.count);
      value += run.amount * count;
      twiceSlope -= run.amount * count * (2n * before + count + 1n);
      before += count;
    }
    return { f: value * SCALE - target, slope: (twiceSlope * SCALE) / 2n - oddTarget };
  }
  const v = div(SCALE, SCALE + i);
  let vBefore = SCALE;
  let sumG = 0n;
  let sumH = 0n;
  for (const run of runs) {
    const vAfter = mul(vBefore, run.count === 1 ? v : power(v, run.count));
    const g = vBefore - vAfter;
    sumG += run.amount * g;
    if (withSlope) {
      const gSlope = mul(v, vAfter * (before + BigInt(run.count)) - vBefore * before);
      sumH += run.amount * (mul(gSlope, i) - g);
    }
    vBefore = vAfter;
    before += BigInt(run.count);
  }
  return { f: div(sumG, i) - target - mul(oddTarget, i), slope: withSlope ? div(div(sumH, i), i) - oddTarget : 0n };
}

/** A monthly rate in fixed point as the stated APR in thousandths of a point, half-up (x ≥ 0). */
function stated(monthly: bigint): number {
  return Number((2n * monthly * 1_200_000n + SCALE) / (2n * SCALE));
}

/** The runs in fixed point, after a run of no payment for the whole months of the first period beyond its first. */
function runsOf(payments: readonly CentsRun[], firstPeriod: FirstPeriod): Run[] {
  const { fullMonths, oddDays } = firstPeriod;
  if (!Number.isSafeInteger(fullMonths) || fullMonths < 1 || !Number.isSafeInteger(oddDays) || oddDays < 0 || oddDays > 30) {
    throw new RangeError(`a first period is one or more whole months and 0 to 30 odd days, got ${fullMonths} months and ${oddDays} days`);
  }
  const runs: Run[] = payments.filter((run) => run.count > 0).map((run) => ({ amount: BigInt(run.amountCents), count: run.count }));
  return fullMonths > 1 ? [{ amount: 0n, count: fullMonths - 1 }, ...runs] : runs;
}

/**
 * The stated APR in thousandths of a percentage point for an amount financed (cents) repaid by
 * the runs of payments, the Newton search starting from `hintThousandths` (the note rate) when
 * the present value there still covers the amount financed. The first payment falls
 * `firstPeriod` after consummation (one month unless told otherwise).
 */
export function solveAprFixedPoint(amountFinancedCents: number, payments: readonly CentsRun[], hintThousandths: number, firstPeriod: FirstPeriod = REGULAR_FIRST_PERIOD): number {
  if (!(amountFinancedCents > 0)) throw new RangeError('the amount financed must be positive');
  const target = BigInt(amountFinancedCents) * SCALE;
  const runs = runsOf(payments, firstPeriod);
  const oddDays = BigInt(firstPeriod.oddDays);
  const f = (i: bigint) => valueAndSlope(runs, target, i, false, oddDays).f;
  const at = (i: bigint) => valueAndSlope(runs, target, i, true, oddDays);

  let x = 0n;
  let here: { f: bigint; slope: bigint } | undefined;
  if (hintThousandths > 0) {
    const start = (BigInt(hintThousandths) * SCALE) / 1_200_000n;
    const atHint = at(start);
    if (atHint.f >= 0n) {
      x = start;
      here = atHint;
    }
  }
  if (!here) {
    here = at(0n);
    if (here.f < 0n) throw new RangeError('the payments are less than the amount financed: no non-negative APR');
    if (here.f === 0n) return 0;
  }
  for (let step = 1; step <= MAX_NEWTON_STEPS; step++) {
    if (here.f === 0n) return stated(x);
    if (!(here.slope < 0n)) break;
    const next = x - div(here.f, here.slope);
    if (next - x < NEAR) {
      const atNext = f(next);
      if (atNext === 0n) return stated(next);
      if (atNext < 0n) return brent(f, x, here.f, next, atNext); // overshot: bracketed
      const probe = next + TOLERANCE;
      if (!(f(probe) > 0n)) return stated(next);
      x = probe;
      here = at(probe);
      continue;
    }
    const there = at(next);
    if (there.f < 0n) return brent(f, x, here.f, next, there.f); // overshot: the root is bracketed
    x = next;
    here = there;
  }
  // Not reached for a convex present value; kept so the search always ends with a verified answer.
  let fx = here.f;
  let hi = 2n * x > BRACKET_START ? 2n * x : BRACKET_START;
  let fHi = f(hi);
  for (let k = 0; fHi >= 0n; k++) {
    if (k >= MAX_BRACKET_DOUBLINGS) throw new RangeError('no APR bracket found');
    x = hi;
    fx = fHi;
    hi *= 2n;
    fHi = f(hi);
  }
  return brent(f, x, fx, hi, fHi);
}

/**
 * The fallback alone, on a bracket [lo, hi] (monthly rates, in thousandths of a point a year)
 * with PV(lo) ≥ amount financed > PV(hi): exported so its tests can drive it, since the Newton
 * search leaves it nothing to do in practice.
 */
export function solveAprOnBracketFixedPoint(amountFinancedCents: number, payments: readonly CentsRun[], loThousandths: number, hiThousandths: number): number {
  const target = BigInt(amountFinancedCents) * SCALE;
  const runs = runsOf(payments, REGULAR_FIRST_PERIOD);
  const f = (i: bigint) => valueAndSlope(runs, target, i, false, 0n).f;
  const [lo, hi] = [(BigInt(loThousandths) * SCALE) / 1_200_000n, (BigInt(hiThousandths) * SCALE) / 1_200_000n];
  const [fLo, fHi] = [f(lo), f(hi)];
  if (fLo < 0n || fHi >= 0n) throw new RangeError('the APR is not bracketed by [lo, hi]');
  return brent(f, lo, fLo, hi, fHi);
}

/** Brent's method (Brent 1973; as in Press et al., Numerical Recipes, zbrent) on a bracket with f(a) ≥ 0 > f(b). */
function brent(f: (i: bigint) => bigint, a0: bigint, fa0: bigint, b0: bigint, fb0: bigint): number {
  let [a, fa, b, fb] = [a0, fa0, b0, fb0];
  if (fa === 0n) return stated(a);
  if (abs(fa) < abs(fb)) [a, b, fa, fb] = [b, a, fb, fa];
  let c = a;
  let fc = fa;
  let d = a;
  let bisected = true;
  for (let iteration = 0; fb !== 0n && abs(b - a) >= TOLERANCE && iteration < MAX_BRENT_ITERATIONS; iteration++) {
    let s: bigint;
    if (fa !== fc && fb !== fc) {
      // Inverse quadratic interpolation; the products of two values of f stay exact integers.
      s = (a * fb * fc) / ((fa - fb) * (fa - fc)) + (b * fa * fc) / ((fb - fa) * (fb - fc)) + (c * fa * fb) / ((fc - fa) * (fc - fb));
    } else {
      s = b - (fb * (b - a)) / (fb - fa);
    }
    const quarter = (3n * a + b) / 4n;
    const [low, high] = quarter < b ? [quarter, b] : [b, quarter];
    if (
      !(s > low && s < high) ||
      (bisected && 2n * abs(s - b) >= abs(b - c)) ||
      (!bisected && 2n * abs(s - b) >= abs(c - d)) ||
      (bisected && abs(b - c) < TOLERANCE) ||
      (!bisected && abs(c - d) < TOLERANCE)
    ) {
      s = (a + b) / 2n;
      bisected = true;
    } else {
      bisected = false;
    }
    const fs = f(s);
    d = c;
    c = b;
    fc = fb;
    if (fa < 0n !== fs < 0n && fs !== 0n) {
      b = s;
      fb = fs;
    } else {
      a = s;
      fa = fs;
    }
    if (abs(fa) < abs(fb)) [a, b, fa, fb] = [b, a, fb, fa];
  }
  return stated(b);
}
