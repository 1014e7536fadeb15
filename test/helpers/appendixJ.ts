/**
 * Regulation Z, Appendix J (b)(8), written out on its own in doubles for the APR tests: the
 * present value of the payments at a monthly rate, each payment over (1 + f·i)(1 + i)^t, t the
 * whole months to it and f the first period's odd days over 30.
 */
export interface PaymentRunCents {
  amountCents: number;
  count: number;
}

export function appendixJPresentValue(runs: readonly PaymentRunCents[], monthly: number, firstPeriod = { fullMonths: 1, oddDays: 0 }): number {
  let value = 0;
  let t = firstPeriod.fullMonths;
  for (const run of runs) {
    for (let k = 0; k < run.count; k++, t++) value += run.amountCents / ((1 + (firstPeriod.oddDays / 30) * monthly) * (1 + monthly) ** t);
  }
  return value;
}

/** Whether the root of the equation for `financedCents` rounds to `statedThousandths` (widened by 10⁻⁴ thousandths for the doubles). */
export function rootRoundsTo(runs: readonly PaymentRunCents[], financedCents: number, statedThousandths: number, firstPeriod?: { fullMonths: number; oddDays: number }): boolean {
  const monthly = (thousandths: number) => thousandths / 1_200_000;
  return (
    appendixJPresentValue(runs, monthly(statedThousandths - 0.5001), firstPeriod) > financedCents &&
    appendixJPresentValue(runs, monthly(statedThousandths + 0.5001), firstPeriod) < financedCents
  );
}
