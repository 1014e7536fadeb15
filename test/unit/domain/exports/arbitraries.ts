/** fast-check generators of export rows for the export domain's property tests. */
import fc from 'fast-check';
import type { ExportSource } from '../../../../src/domain/exports/fields.ts';

const STATUSES = ['draft', 'submitted', 'approved', 'declined', 'referred', 'withdrawn'] as const;

/** Text a person might type, including what breaks formats: separators, quotes, line breaks, formula starts, any Unicode. */
export const awkwardText = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 30 }),
  fc.string({ unit: fc.constantFrom(',', ';', '|', '"', "'", '\n', '\r', '\t', '=', '+', '-', '@', '<', '>', '&', ' ', 'a', 'é', '王', '\u0001', '\uFF1D'), maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
);

const timestamp = fc
  .integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2099, 11, 31) })
  .map((ms) => new Date(ms).toISOString());
const cents = fc.integer({ min: 0, max: 10_000_000_000 });

export const exportSource: fc.Arbitrary<ExportSource> = fc.record({
  mortgageId: fc.stringMatching(/^mtg-[0-9a-z]{26}$/),
  status: fc.constantFrom(...STATUSES),
  applicantName: awkwardText,
  applicantEmail: fc.option(awkwardText, { nil: null }),
  amountCents: fc.integer({ min: 1, max: 10_000_000_000 }),
  annualIncomeCents: fc.option(cents, { nil: null }),
  monthlyDebtsCents: fc.option(cents, { nil: null }),
  creditScore: fc.option(fc.integer({ min: 300, max: 850 }), { nil: null }),
  termYears: fc.integer({ min: 1, max: 40 }),
  propertyValueCents: fc.option(cents, { nil: null }),
  currency: fc.constantFrom('USD', 'EUR', 'GBP'),
  quoteId: fc.option(fc.stringMatching(/^qte-[0-9a-z]{26}$/), { nil: null }),
  createdAt: timestamp,
  submittedAt: fc.option(timestamp, { nil: null }),
  decidedAt: fc.option(timestamp, { nil: null }),
  withdrawnAt: fc.option(timestamp, { nil: null }),
  updatedAt: timestamp,
  bankVerification: fc.option(fc.record({ verified: fc.boolean(), accountMask: fc.stringMatching(/^[0-9A-Z]{4}$/), checkedAt: timestamp }), {
    nil: null,
  }),
});
