import { Decimal } from 'decimal.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ExportSource } from '../../../../src/domain/exports/fields.ts';
import { escapeXml, mismoDeal, mismoEpilogue, mismoPrologue, monthlyCents } from '../../../../src/domain/exports/mismo.ts';
import { awkwardText, exportSource } from './arbitraries.ts';
import { NotWellFormed, child, parseStrictXml, textAt } from './strictXml.ts';

const document = (rows: ExportSource[]) => mismoPrologue('2026-11-23T12:00:00.000Z') + rows.map(mismoDeal).join('') + mismoEpilogue();

/** What survives XML: characters XML 1.0 cannot hold are replaced by U+FFFD. */
const xmlSafe = (text: string) =>
  text.replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');

describe('escapeXml', () => {
  it.each([
    ['a & b', 'a &amp; b'],
    ['<tag attr="v">', '&lt;tag attr=&quot;v&quot;&gt;'],
    ['line\r\nbreak', 'line&#13;\nbreak'],
    ['bell\u0007', 'bell\uFFFD'],
    ['lone \uD800 surrogate', 'lone \uFFFD surrogate'],
    ['pair 😀 kept', 'pair 😀 kept'],
    ["it's", "it's"],
  ])('%j is written %j', (text, escaped) => {
    expect(escapeXml(text)).toBe(escaped);
  });
});

describe('MISMO writer', () => {
  it('writes a well-formed MESSAGE whose DEALs give back each application, for any rows', () => {
    fc.assert(
      fc.property(fc.array(exportSource, { maxLength: 4 }), (rows) => {
        const message = parseStrictXml(document(rows));
        const deals = child(message, 'DEAL_SETS', 'DEAL_SET', 'DEALS').children;
        expect(deals).toHaveLength(rows.length);
        rows.forEach((row, i) => {
          const deal = deals[i]!;
          const loan = child(deal, 'LOANS', 'LOAN');
          expect(textAt(loan, 'LOAN_IDENTIFIERS', 'LOAN_IDENTIFIER', 'LoanIdentifier')).toBe(row.mortgageId);
          expect(textAt(loan, 'MATURITY', 'MATURITY_RULE', 'LoanMaturityPeriodCount')).toBe(String(row.termYears * 12));
          expect(textAt(deal, 'PARTIES', 'PARTY', 'INDIVIDUAL', 'NAME', 'FullName')).toBe(xmlSafe(row.applicantName));
          const bank = child(loan, 'EXTENSION', 'OTHER', 'mos:MORTGAGE_ORIGINATION').children.find((c) => c.name === 'mos:BANK_VERIFICATION');
          expect(bank === undefined).toBe(row.bankVerification === null);
        });
      }),
    );
  });

  it('carries any applicant name through XML unchanged but for characters XML cannot hold', () => {
    fc.assert(
      fc.property(awkwardText, (name) => {
        const row = fc.sample(exportSource, { numRuns: 1, seed: 3 })[0]!;
        const message = parseStrictXml(document([{ ...row, applicantName: name }]));
        expect(textAt(child(message, 'DEAL_SETS', 'DEAL_SET', 'DEALS', 'DEAL'), 'PARTIES', 'PARTY', 'INDIVIDUAL', 'NAME', 'FullName')).toBe(xmlSafe(name));
      }),
    );
  });

  it('writes amounts with two decimals, the term in months, the income per month, and leaves out what is unknown', () => {
    const row = fc.sample(exportSource, { numRuns: 1, seed: 5 })[0]!;
    const known = parseStrictXml(document([{ ...row, amountCents: 35_000_050, termYears: 25, annualIncomeCents: 10_000_000, propertyValueCents: null, creditScore: null }]));
    const deal = child(known, 'DEAL_SETS', 'DEAL_SET', 'DEALS', 'DEAL');
    expect(textAt(deal, 'LOANS', 'LOAN', 'TERMS_OF_LOAN', 'BaseLoanAmount')).toBe('350000.50');
    expect(textAt(deal, 'LOANS', 'LOAN', 'MATURITY', 'MATURITY_RULE', 'LoanMaturityPeriodCount')).toBe('300');
    const borrower = child(deal, 'PARTIES', 'PARTY', 'ROLES', 'ROLE', 'BORROWER');
    // 100,000.00 a year is 8,333.333… a month: rounded half-up to the cent.
    expect(textAt(borrower, 'CURRENT_INCOME', 'CURRENT_INCOME_ITEMS', 'CURRENT_INCOME_ITEM', 'CURRENT_INCOME_ITEM_DETAIL', 'CurrentIncomeMonthlyTotalAmount')).toBe('8333.33');
    expect(borrower.children.map((c) => c.name)).toEqual(['CURRENT_INCOME']);
    expect(deal.children.map((c) => c.name)).not.toContain('COLLATERALS');
  });

  it('dates the status by the move into it', () => {
    const row = fc.sample(exportSource, { numRuns: 1, seed: 9 })[0]!;
    const statusDate = (r: ExportSource) =>
      textAt(child(parseStrictXml(document([r])), 'DEAL_SETS', 'DEAL_SET', 'DEALS', 'DEAL'), 'LOANS', 'LOAN', 'LOAN_STATUSES', 'LOAN_STATUS', 'LoanStatusDate');
    const times = { createdAt: '2026-01-01T10:00:00.000Z', submittedAt: '2026-01-02T10:00:00.000Z', decidedAt: '2026-01-03T10:00:00.000Z', withdrawnAt: '2026-01-04T10:00:00.000Z' };
    expect(statusDate({ ...row, ...times, status: 'draft' })).toBe('2026-01-01');
    expect(statusDate({ ...row, ...times, status: 'submitted' })).toBe('2026-01-02');
    expect(statusDate({ ...row, ...times, status: 'declined' })).toBe('2026-01-03');
    expect(statusDate({ ...row, ...times, status: 'withdrawn' })).toBe('2026-01-04');
  });
});

describe('the strict XML check the MISMO tests rely on', () => {
  it.each([
    ['<a><b></a>', 'a mismatched end tag'],
    ['<a>x', 'an unclosed element'],
    ['<a>&</a>', 'a bare ampersand'],
    ['<a>&nbsp;</a>', 'an undeclared entity'],
    ['<a>\u0001</a>', 'an illegal control character'],
    ['<a>&#1;</a>', 'a reference to an illegal character'],
    ['<a></a><b/>', 'two roots'],
    ['<a x="1" x="2"/>', 'a repeated attribute'],
    ['<a x="<"/>', 'a "<" in an attribute'],
    ['<a><!-- c --></a>', 'a comment (never written, so refused)'],
    ['text<a/>', 'text outside the root'],
  ])('refuses %j (%s)', (xml) => {
    expect(() => parseStrictXml(xml)).toThrow(NotWellFormed);
  });

  it('decodes references and keeps attributes', () => {
    const root = parseStrictXml('<?xml version="1.0"?>\n<a k=\'v &amp; w\'><b>1 &lt; 2 &#x263A; &#13;</b><c/></a>\n');
    expect(root.attributes).toEqual({ k: 'v & w' });
    expect(textAt(root, 'b')).toBe('1 < 2 ☺ \r');
    expect(root.children.map((c) => c.name)).toEqual(['b', 'c']);
  });
});

describe('monthlyCents', () => {
  it.each([
    [12_000_000, 1_000_000],
    [10_000_000, 833_333], // 833,333.33… cents
    [10, 1], // 0.8333… cent rounds up
    [6, 1], // exactly half a cent rounds up
    [5, 0],
    [0, 0],
  ])('%d a year is %d a month', (annual, monthly) => {
    expect(monthlyCents(annual)).toBe(monthly);
  });

  it('is the decimal quotient rounded half-up, for any whole number of cents', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (annual) => {
        expect(monthlyCents(annual)).toBe(new Decimal(annual).dividedBy(12).toDecimalPlaces(0, Decimal.ROUND_HALF_UP).toNumber());
      }),
    );
  });
});
