/**
 * MISMO 3.4 XML (the Mortgage Industry Standards Maintenance Organization's reference model), as
 * a stream: the opening of the `MESSAGE` first, then one `DEAL` fragment per application, then the
 * closing tags, so no document is ever held whole in memory.
 *
 * Layout: MESSAGE / ABOUT_VERSIONS, DEAL_SETS / DEAL_SET / DEALS / DEAL, each DEAL holding what the
 * service knows of one application: the property's estimated value (COLLATERALS), the applicant's
 * other monthly debts (LIABILITIES), the loan (LOANS / LOAN: identifier, status, term in months,
 * amount) and the borrower (PARTIES: name, email, credit score, monthly income). Containers are
 * written in the reference model's order (alphabetical, EXTENSION last); absent data is left
 * out rather than written empty. What MISMO has no element for (bank verification, currency)
 * goes in the LOAN's EXTENSION, in this service's own namespace.
 */
import { formatCents } from './amounts.ts';
import type { ExportSource } from './fields.ts';

const MISMO_NAMESPACE = 'http://www.mismo.org/residential/2009/schemas';
const EXTENSION_NAMESPACE = 'urn:mortgage-origination:export:1';

const TWO_DECIMALS = { decimalSeparator: '.', thousandsSeparator: '', decimals: 'two' } as const;

// XML 1.0 allows neither most C0 controls, nor U+FFFE/U+FFFF, nor unpaired surrogates: such a
// character is replaced by U+FFFD, so the document stays well-formed and the reader sees that
// something was there. CR is kept as a character reference (parsers turn a raw CR into LF).
const HAS_SPECIAL = /[&<>"\r\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const EVERY_SPECIAL = new RegExp(HAS_SPECIAL.source, 'g');
const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', '\r': '&#13;' };

/** Text made safe for XML character data and attribute values. */
export function escapeXml(text: string): string {
  return HAS_SPECIAL.test(text) ? text.replace(EVERY_SPECIAL, (ch) => ESCAPES[ch] ?? '\uFFFD') : text;
}

/** A writer of one simple element: nothing for null, else the escaped value between its tags. */
function element(name: string): (value: string | null) => string {
  const open = `<${name}>`;
  const close = `</${name}>`;
  return (value) => (value === null ? '' : open + escapeXml(value) + close);
}

/** A writer of nested containers (outermost first) around content; nothing when the content is empty. */
function containers(...names: string[]): (inner: string) => string {
  const open = names.map((name) => `<${name}>`).join('');
  const close = names.map((name) => `</${name}>`).reverse().join('');
  return (inner) => (inner === '' ? '' : open + inner + close);
}

function amount(cents: number | null): string | null {
  return cents === null ? null : formatCents(cents, TWO_DECIMALS);
}

/** MISMO dates (`LoanStatusDate`, `ApplicationReceivedDate`) are calendar dates. */
function dateOf(iso: string | null): string | null {
  return iso === null ? null : iso.slice(0, 10);
}

/** The moment the current status was reached. */
function statusDate(row: ExportSource): string {
  switch (row.status) {
    case 'approved':
    case 'declined':
    case 'referred':
      return row.decidedAt ?? row.updatedAt;
    case 'withdrawn':
      return row.withdrawnAt ?? row.updatedAt;
    case 'submitted':
      return row.submittedAt ?? row.updatedAt;
    case 'draft':
      return row.createdAt;
    case 'clear_to_close':
      // The move to clear_to_close is the application's last change.
      return row.updatedAt;
  }
}

/** Annual income in whole cents → monthly, rounded half-up to the cent (integer arithmetic: exact). */
export function monthlyCents(annualCents: number): number {
  const remainder = annualCents % 12;
  const whole = (annualCents - remainder) / 12;
  return remainder * 2 >= 12 ? whole + 1 : whole;
}

const collaterals = containers('COLLATERALS', 'COLLATERAL', 'SUBJECT_PROPERTY', 'PROPERTY_DETAIL');
const propertyEstimatedValue = element('PropertyEstimatedValueAmount');
const liabilities = containers('LIABILITIES', 'LIABILITY', 'LIABILITY_DETAIL');
const liabilityMonthlyPayment = element('LiabilityMonthlyPaymentAmount');
const loanDetail = containers('LOAN_DETAIL');
const applicationReceivedDate = element('ApplicationReceivedDate');
const loanIdentifier = element('LoanIdentifier');
const loanStatuses = containers('LOAN_STATUSES', 'LOAN_STATUS');
const loanStatusDate = element('LoanStatusDate');
const loanStatusIdentifier = element('LoanStatusIdentifier');
const loanMaturityPeriodCount = element('LoanMaturityPeriodCount');
const baseLoanAmount = element('BaseLoanAmount');
const contactEmail = containers('CONTACT_POINTS', 'CONTACT_POINT', 'CONTACT_POINT_EMAIL');
const contactPointEmailValue = element('ContactPointEmailValue');
const fullName = element('FullName');
const creditScores = containers('CREDIT_SCORES', 'CREDIT_SCORE', 'CREDIT_SCORE_DETAIL');
const creditScoreValue = element('CreditScoreValue');
const currentIncome = containers('CURRENT_INCOME', 'CURRENT_INCOME_ITEMS', 'CURRENT_INCOME_ITEM', 'CURRENT_INCOME_ITEM_DETAIL');
const currentIncomeMonthlyTotal = element('CurrentIncomeMonthlyTotalAmount');
const applicationStatus = element('mos:ApplicationStatus');
const currencyCode = element('mos:CurrencyCode');
const bankAccountMask = element('mos:BankAccountMask');
const bankVerificationDatetime = element('mos:BankVerificationDatetime');

/** One application as a MISMO `DEAL` element. */
export function mismoDeal(row: ExportSource): string {
  const bank = row.bankVerification;
  const extension =
    '<EXTENSION><OTHER><mos:MORTGAGE_ORIGINATION>' +
    applicationStatus(row.status) +
    currencyCode(row.currency) +
    (bank === null
      ? ''
      : '<mos:BANK_VERIFICATION>' +
        bankAccountMask(bank.accountMask) +
        bankVerificationDatetime(bank.checkedAt) +
        `<mos:BankVerifiedIndicator>${bank.verified ? 'true' : 'false'}</mos:BankVerifiedIndicator>` +
        '</mos:BANK_VERIFICATION>') +
    '</mos:MORTGAGE_ORIGINATION></OTHER></EXTENSION>';
  const loan =
    '<LOAN LoanRoleType="SubjectLoan">' +
    loanDetail(applicationReceivedDate(dateOf(row.submittedAt))) +
    `<LOAN_IDENTIFIERS><LOAN_IDENTIFIER>${loanIdentifier(row.mortgageId)}<LoanIdentifierType>LenderLoan</LoanIdentifierType></LOAN_IDENTIFIER></LOAN_IDENTIFIERS>` +
    loanStatuses(loanStatusDate(dateOf(statusDate(row))) + loanStatusIdentifier(row.status)) +
    `<MATURITY><MATURITY_RULE>${loanMaturityPeriodCount(String(row.termYears * 12))}<LoanMaturityPeriodType>Month</LoanMaturityPeriodType></MATURITY_RULE></MATURITY>` +
    `<TERMS_OF_LOAN>${baseLoanAmount(amount(row.amountCents))}</TERMS_OF_LOAN>` +
    extension +
    '</LOAN>';
  const individual = '<INDIVIDUAL>' + contactEmail(contactPointEmailValue(row.applicantEmail)) + `<NAME>${fullName(row.applicantName)}</NAME></INDIVIDUAL>`;
  const borrower =
    '<BORROWER>' +
    creditScores(creditScoreValue(row.creditScore === null ? null : String(row.creditScore))) +
    currentIncome(
      row.annualIncomeCents === null ? '' : currentIncomeMonthlyTotal(amount(monthlyCents(row.annualIncomeCents))) + '<IncomeType>Base</IncomeType>',
    ) +
    '</BORROWER>';
  return (
    '<DEAL>' +
    collaterals(propertyEstimatedValue(amount(row.propertyValueCents))) +
    liabilities(liabilityMonthlyPayment(amount(row.monthlyDebtsCents))) +
    `<LOANS>${loan}</LOANS>` +
    `<PARTIES><PARTY>${individual}<ROLES><ROLE>${borrower}<ROLE_DETAIL><PartyRoleType>Borrower</PartyRoleType></ROLE_DETAIL></ROLE></ROLES></PARTY></PARTIES>` +
    '</DEAL>\n'
  );
}

/** Everything before the first DEAL. `createdAt` is when the export began. */
export function mismoPrologue(createdAt: string): string {
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    `<MESSAGE xmlns="${MISMO_NAMESPACE}" xmlns:mos="${EXTENSION_NAMESPACE}" MISMOReferenceModelIdentifier="3.4.0">\n` +
    `<ABOUT_VERSIONS><ABOUT_VERSION>${element('CreatedDatetime')(createdAt)}</ABOUT_VERSION></ABOUT_VERSIONS>\n` +
    '<DEAL_SETS><DEAL_SET><DEALS>\n'
  );
}

export function mismoEpilogue(): string {
  return '</DEALS></DEAL_SET></DEAL_SETS>\n</MESSAGE>\n';
}
