/**
 * The Loan Estimate figures as a one-page PDF (pdf-lib): the sections of form H-24 the service
 * computes (Loan Terms, Projected Payments, Comparisons) and the clock, headed as what it is: not
 * the Loan Estimate, which the lender issues on the form with everything else it holds. The
 * figures are the ones GET /v1/applications/{mortgageId}/loan-estimate answers, formatted as the
 * form writes them ($162,000; $761.78; 4.274%). Standard Helvetica: its WinAnsi encoding takes
 * the ASCII this page is written in.
 */
import { PDFDocument, StandardFonts, rgb, type PDFFont, type PDFPage } from 'pdf-lib';
import type { LoanEstimate } from './loanEstimates.ts';

const PAGE: [number, number] = [612, 792]; // US Letter, points
const MARGIN = 54;

/** Dollars as the form writes them: thousands separated, cents only when asked. */
function dollars(amount: number, cents: boolean): string {
  const fixed = amount.toFixed(cents ? 2 : 0);
  const [whole, fraction] = fixed.split('.');
  const grouped = whole!.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `$${grouped}${fraction === undefined ? '' : `.${fraction}`}`;
}

/** The loan amount is not rounded, and a whole amount is written without cents (1026.37(o)(4)(i)(B)). */
const loanAmount = (amount: number) => dollars(amount, !Number.isInteger(amount));
const whole = (amount: number | null) => (amount === null ? '-' : dollars(amount, false));

class Writer {
  private y = PAGE[1] - MARGIN;
  private readonly page: PDFPage;
  private readonly regular: PDFFont;
  private readonly bold: PDFFont;
  constructor(page: PDFPage, regular: PDFFont, bold: PDFFont) {
    this.page = page;
    this.regular = regular;
    this.bold = bold;
  }

  line(text: string, options: { bold?: boolean; size?: number; x?: number } = {}): void {
    const size = options.size ?? 10;
    this.page.drawText(text, { x: MARGIN + (options.x ?? 0), y: this.y, size, font: options.bold ? this.bold : this.regular, color: rgb(0, 0, 0) });
    this.y -= size + 5;
  }

  row(cells: string[], widths: number[], bold = false): void {
    let x = 0;
    cells.forEach((cell, i) => {
      this.page.drawText(cell, { x: MARGIN + x, y: this.y, size: 10, font: bold ? this.bold : this.regular });
      x += widths[i]!;
    });
    this.y -= 15;
  }

  gap(points = 8): void {
    this.y -= points;
  }
}

export async function loanEstimatePdf(estimate: LoanEstimate): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  pdf.setTitle(`Loan Estimate figures ${estimate.mortgageId}`);
  pdf.setCreator('mortgage-origination-service');
  pdf.setProducer('pdf-lib');
  // A fixed date keeps the same figures the same bytes (the clock and figures carry their own times).
  const stamp = new Date(estimate.clock.completedAt ?? '2000-01-01T00:00:00.000Z');
  pdf.setCreationDate(stamp);
  pdf.setModificationDate(stamp);
  const page = pdf.addPage(PAGE);
  const out = new Writer(page, await pdf.embedFont(StandardFonts.Helvetica), await pdf.embedFont(StandardFonts.HelveticaBold));

  out.line('Loan Estimate figures', { bold: true, size: 16 });
  out.line(`Application ${estimate.mortgageId}${estimate.livemode ? '' : ' (test mode)'}`);
  out.line(`From ${estimate.source.kind === 'rate_lock' ? 'rate lock' : 'quote'} ${estimate.source.id}`);
  out.line('These are the figures of form H-24 computed from the loan terms. They are not a Loan Estimate:', { size: 9 });
  out.line('the lender issues the Loan Estimate with its closing costs, escrow, mortgage insurance and the rest.', { size: 9 });
  out.gap();

  const clock = estimate.clock;
  out.line('Delivery', { bold: true, size: 12 });
  if (clock.status === 'not_started') out.line(`Not yet a TRID application; missing: ${clock.missing.join(', ')}`);
  else {
    out.line(`Application complete ${clock.completedAt} (received ${clock.receivedDate}, ${clock.timeZone})`);
    out.line(`Due by the end of ${clock.dueDate} (${clock.dueAt}); status: ${clock.status}`);
    if (clock.deliveredAt) out.line(`Delivered ${clock.deliveredAt} by ${clock.deliveryMethod}`);
    if (clock.stoppedAt) out.line(`Stopped ${clock.stoppedAt}: application ${clock.stoppedBecause}`);
  }
  out.gap();

  out.line('Loan Terms', { bold: true, size: 12 });
  out.row(['Loan Amount', loanAmount(estimate.loanTerms.loanAmount)], [200, 200]);
  out.row(['Interest Rate', `${estimate.loanTerms.interestRate}%`], [200, 200]);
  out.row(['Monthly Principal & Interest', dollars(estimate.loanTerms.monthlyPrincipalAndInterest, true)], [200, 200]);
  out.gap();

  out.line('Projected Payments', { bold: true, size: 12 });
  const widths = [90, 100, 100, 90, 120];
  out.row(['Years', 'Principal & Interest', 'Mortgage Insurance', 'Escrow', 'Total Monthly Payment'], widths, true);
  for (const column of estimate.projectedPayments) {
    out.row(
      [
        `${column.fromYear}-${column.toYear}`,
        dollars(column.principalAndInterest, true),
        whole(column.mortgageInsurance),
        whole(column.estimatedEscrow),
        dollars(column.estimatedTotalMonthlyPayment, false),
      ],
      widths,
    );
  }
  out.gap();

  const comparisons = estimate.comparisons;
  out.line('Comparisons', { bold: true, size: 12 });
  out.row(['In 5 Years', `${dollars(comparisons.inFiveYears.totalPaid, false)} total paid in principal, interest, mortgage insurance and loan costs`], [110, 400]);
  out.row(['', `${dollars(comparisons.inFiveYears.principalPaidOff, false)} principal paid off`], [110, 400]);
  out.row(['Annual Percentage Rate (APR)', `${comparisons.annualPercentageRate}%`], [170, 300]);
  out.row(['Total Interest Percentage (TIP)', `${comparisons.totalInterestPercentage}%`], [170, 300]);

  return pdf.save({ useObjectStreams: false });
}
