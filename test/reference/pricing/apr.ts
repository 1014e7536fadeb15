/**
 * THE PRICING ORACLE (one of its files; see ./quote.ts): the decimal.js APR solver that stated every
 * APR until issue 17 and the ones near a rounding boundary until issue 26. Only tests import it;
 * production runs the same search in doubles and integer fixed point (src/domain/pricing/apr.ts,
 * aprFixedPoint.ts). Frozen: do not optimise it.
 *
 * The annual percentage rate by the actuarial method of Regulation Z, Appendix J (12 CFR 1026,
 * Appendix J (b)): the unit-period rate i at which the amount financed equals the present value of
 * every payment, each discounted over the unit periods before it; APR = i × unit periods per year.
 *
 * The unit period here is a month and the first payment falls one period after consummation
 * (a "regular" first period), so payment k is discounted by (1 + i)^−k.
 *
 * The present value is convex and decreasing in i (a sum of p·(1 + i)^−k with p ≥ 0), so Newton's
 * method started below the root (where PV ≥ the amount financed: at the hint, such as the note rate,
 * or at 0) climbs monotonically to it and never overshoots; each iterate stays a lower bound. The
 * solver stops once PV(x) ≥ amount financed > PV(x + 1e−9) confirms a bracket [x, x + 1e−9] per
 * month (1.2e−6 percentage points a year): the stated APR, rounded half-up to 0.001, is then within
 * 0.0005 + 1.2e−6 points of the exact root, well inside Reg Z's 1/8 point tolerance
 * (§ 1026.22(a)(2)). Should an iterate ever overshoot (it cannot in exact arithmetic) or the
 * iterations run out, Brent's method (inverse quadratic interpolation, secant and bisection) on a
 * verified bracket finishes the job: a bracketed method that always converges.
 */
import { Dec as MoneyDec, toPercentPlaces, type Decimal } from './decimal.ts';

/**
 * The solver's own decimal: 20 significant digits resolve a present value to a relative 10^−19,
 * far below the relative change (at least 10^−9) that a 10^−9 change of the monthly rate makes,
 * at a fraction of the cost of the money precision.
 */
const Dec = MoneyDec.clone({ precision: 20 });
const ONE = new Dec(1);
const ZERO = new Dec(0);

/** `count` equal payments of `amount`, one a month, following the runs before it. */
export interface PaymentRun {
  amount: Decimal;
  count: number;
}

export interface AprSolution {
  /** The APR in percent, rounded half-up to three decimals (how it is disclosed). */
  apr: Decimal;
  /** The solver's unrounded monthly rate. */
  monthlyRate: Decimal;
  /** Width of the final bracket around the exact monthly rate. */
  bracketWidth: Decimal;
  iterations: number;
}

const PERIODS_PER_YEAR = new Dec(12);
/** Width of the final bracket, per month: 1.2e−6 percentage points a year. */
const TOLERANCE = new Dec('1e-9');
/**
 * A Newton step below this is the last one needed: the error after a step s is about (f″/2f′)·s²,
 * under 200·s² for terms up to 40 years, so under 1e−10 here, a tenth of the tolerance.
 */
const NEAR = new Dec('7e-7');
const MAX_NEWTON_STEPS = 60;
const MAX_BRENT_ITERATIONS = 200;
const MAX_BRACKET_DOUBLINGS = 60;

/** Present value at monthly rate i of the payment runs, in order, the first payment one month out. */
export function presentValue(runs: readonly PaymentRun[], i: Decimal): Decimal {
  return valueAndSlope(runs, new Dec(i), false).value;
}

/**
 * PV(i) and, when asked, dPV/di. A run of m payments a after s earlier ones is worth
 * a·(v^s − v^(s+m))/i, v = 1/(1 + i); its slope is a·(g′·i − g)/i² with g = v^s − v^(s+m) and
 * g′ = −s·v^(s+1) + (s+m)·v^(s+m+1). At i = 0: a·m and −a·m·(2s + m + 1)/2.
 */
function valueAndSlope(runs: readonly PaymentRun[], i: Decimal, withSlope: boolean): { value: Decimal; slope: Decimal } {
  let value = ZERO;
  let slope = ZERO;
  let before = 0;
  if (i.isZero()) {
    for (const run of runs) {
      if (run.count <= 0) continue;
      const amount = new Dec(run.amount);
      value = value.plus(amount.times(run.count));
      if (withSlope) slope = slope.minus(amount.times(run.count * (2 * before + run.count + 1)).div(2));
      before += run.count;
    }
    return { value, slope };
  }
  // Σ a·g and Σ a·(g′·i − g), divided by i and i² once at the end (one division, not one per run).
  const v = ONE.div(ONE.plus(i));
  let vBefore = ONE; // v^before
  let sumG = ZERO;
  let sumH = ZERO;
  for (const run of runs) {
    if (run.count <= 0) continue;
    const amount = new Dec(run.amount);
    const vAfter = vBefore.times(run.count === 1 ? v : v.pow(run.count)); // v^(before + count)
    const g = vBefore.minus(vAfter);
    sumG = sumG.plus(amount.times(g));
    if (withSlope) {
      const gSlope = v.times(vAfter.times(before + run.count).minus(vBefore.times(before)));
      sumH = sumH.plus(amount.times(gSlope.times(i).minus(g)));
    }
    vBefore = vAfter;
    before += run.count;
  }
  const inverse = ONE.div(i);
  value = sumG.times(inverse);
  if (withSlope) slope = sumH.times(inverse).times(inverse);
  return { value, slope };
}

/**
 * Solves for the monthly rate. `hint` is a rate believed to lie at or below the root (the note rate
 * of a loan with non-negative prepaid finance charges); it only speeds the search up.
 */
export function solveApr(amountFinanced: Decimal, payments: readonly PaymentRun[], hint?: Decimal): AprSolution {
  const target = new Dec(amountFinanced);
  if (!target.greaterThan(0)) throw new RangeError('the amount financed must be positive');
  const runs = payments.filter((run) => run.count > 0).map((run) => ({ amount: new Dec(run.amount), count: run.count }));
  const f = (i: Decimal) => valueAndSlope(runs, i, false).value.minus(target);
  const at = (i: Decimal) => {
    const { value, slope } = valueAndSlope(runs, i, true);
    return { f: value.minus(target), slope };
  };

  // Newton from below: start at the hint when PV(hint) ≥ the amount financed (then PV(0) ≥ it too, and
  // a non-negative root exists), else at 0 after checking that the payments cover the amount financed.
  let x = ZERO;
  let here: { f: Decimal; slope: Decimal } | undefined;
  if (hint && hint.greaterThan(0)) {
    const start = new Dec(hint);
    const atHint = at(start);
    if (!atHint.f.isNegative()) {
      x = start;
      here = atHint;
    }
  }
  if (!here) {
    here = at(ZERO);
    if (here.f.isNegative()) throw new RangeError('the payments are less than the amount financed: no non-negative APR');
    if (here.f.isZero()) return done(ZERO, ZERO, 0);
  }
  for (let step = 1; step <= MAX_NEWTON_STEPS; step++) {
    if (here.f.isZero()) return done(x, ZERO, step);
    if (!here.slope.isNegative()) break;
    const next = x.minus(here.f.div(here.slope));
    if (next.minus(x).lessThan(NEAR)) {
      // Newton converges quadratically: after a step this small, `next` lies within ~10^−10 below
      // the root. Confirm the bracket [next, next + tolerance] with two plain evaluations.
      const atNext = f(next);
      if (atNext.isZero()) return done(next, ZERO, step);
      if (atNext.isNegative()) return brent(f, x, here.f, next, atNext, step); // overshot: bracketed
      const probe = next.plus(TOLERANCE);
      const atProbe = f(probe);
      if (!atProbe.greaterThan(0)) return done(next, TOLERANCE, step);
      x = probe;
      here = at(probe);
      continue;
    }
    const there = at(next);
    if (there.f.isNegative()) return brent(f, x, here.f, next, there.f, step); // overshot: the root is bracketed
    x = next;
    here = there;
  }
  let fx = here.f;
  // Not reached for a convex PV; kept so the solver always ends with a verified answer.
  let hi = Dec.max(x.times(2), new Dec('0.01'));
  let fHi = f(hi);
  for (let k = 0; !fHi.isNegative(); k++) {
    if (k >= MAX_BRACKET_DOUBLINGS) throw new RangeError('no APR bracket found');
    x = hi;
    fx = fHi;
    hi = hi.times(2);
    fHi = f(hi);
  }
  return brent(f, x, fx, hi, fHi, 0);
}

/**
 * The fallback alone, on a bracket [lo, hi] with PV(lo) ≥ amount financed > PV(hi): exported so its
 * tests can drive it, since the Newton path leaves it nothing to do in practice.
 */
export function solveAprOnBracket(amountFinanced: Decimal, runs: readonly PaymentRun[], lo: Decimal, hi: Decimal): AprSolution {
  const target = new Dec(amountFinanced);
  const f = (i: Decimal) => presentValue(runs, i).minus(target);
  const [fLo, fHi] = [f(lo), f(hi)];
  if (fLo.isNegative() || !fHi.isNegative()) throw new RangeError('the APR is not bracketed by [lo, hi]');
  return brent(f, lo, fLo, hi, fHi, 0);
}

/** Brent's method (Brent 1973; as in Press et al., Numerical Recipes, zbrent) on a bracket with f(a) ≥ 0 > f(b). */
function brent(f: (i: Decimal) => Decimal, a0: Decimal, fa0: Decimal, b0: Decimal, fb0: Decimal, spent: number): AprSolution {
  let [a, fa, b, fb] = [a0, fa0, b0, fb0];
  if (fa.isZero()) return done(a, ZERO, spent);
  if (fa.abs().lessThan(fb.abs())) [a, b, fa, fb] = [b, a, fb, fa];
  let c = a;
  let fc = fa;
  let d = a;
  let bisected = true;
  let iterations = spent;
  while (!fb.isZero() && b.minus(a).abs().greaterThanOrEqualTo(TOLERANCE) && iterations < spent + MAX_BRENT_ITERATIONS) {
    iterations++;
    let s: Decimal;
    if (!fa.equals(fc) && !fb.equals(fc)) {
      s = a.times(fb).times(fc).div(fa.minus(fb).times(fa.minus(fc)))
        .plus(b.times(fa).times(fc).div(fb.minus(fa).times(fb.minus(fc))))
        .plus(c.times(fa).times(fb).div(fc.minus(fa).times(fc.minus(fb))));
    } else {
      s = b.minus(fb.times(b.minus(a)).div(fb.minus(fa)));
    }
    const quarter = a.times(3).plus(b).div(4);
    const outside = !(s.greaterThan(Dec.min(quarter, b)) && s.lessThan(Dec.max(quarter, b)));
    if (
      outside ||
      (bisected && s.minus(b).abs().greaterThanOrEqualTo(b.minus(c).abs().div(2))) ||
      (!bisected && s.minus(b).abs().greaterThanOrEqualTo(c.minus(d).abs().div(2))) ||
      (bisected && b.minus(c).abs().lessThan(TOLERANCE)) ||
      (!bisected && c.minus(d).abs().lessThan(TOLERANCE))
    ) {
      s = a.plus(b).div(2);
      bisected = true;
    } else {
      bisected = false;
    }
    const fs = f(s);
    d = c;
    c = b;
    fc = fb;
    if (fa.isNegative() !== fs.isNegative() && !fs.isZero()) {
      b = s;
      fb = fs;
    } else {
      a = s;
      fa = fs;
    }
    if (fa.abs().lessThan(fb.abs())) [a, b, fa, fb] = [b, a, fb, fa];
  }
  return done(b, fb.isZero() ? ZERO : b.minus(a).abs(), iterations);
}

function done(monthly: Decimal, width: Decimal, iterations: number): AprSolution {
  return { apr: toPercentPlaces(monthly.times(PERIODS_PER_YEAR).times(100)), monthlyRate: monthly, bracketWidth: width, iterations };
}
