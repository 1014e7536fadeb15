/**
 * The lender a notice reports (GET …/notices) is the one its file names: notices stored before
 * lenders stated their ECOA agency hold none, and their statement named the Bureau.
 */
import { describe, expect, it } from 'vitest';
import { noticeSections, type NoticeContent } from '../../../src/domain/adverseAction/notice.ts';
import { toNotice } from '../../../src/services/notices.ts';
import type { NoticeRecord } from '../../../src/store/notices.ts';

const content = (lender: unknown): NoticeContent =>
  ({
    noticeId: 'ntc-01jabcdefghjkmnpqrstvwxyz0',
    mortgageId: 'mtg-01jabcdefghjkmnpqrstvwxyz0',
    applicantName: 'Dana Declined',
    amount: 300_000,
    action: 'declined',
    decidedBy: 'underwriting_rules',
    decidedAt: '2026-12-01T10:00:00.000Z',
    dueAt: '2026-12-31T10:00:00.000Z',
    reasons: [{ code: 'excessive_obligations', text: 'Excessive obligations in relation to income' }],
    scoreDisclosure: null,
    lender,
  }) as NoticeContent;

const record = (lender: unknown): NoticeRecord => ({
  noticeId: 'ntc-01jabcdefghjkmnpqrstvwxyz0',
  accountId: 'acct_x',
  mortgageId: 'mtg-01jabcdefghjkmnpqrstvwxyz0',
  status: 'due',
  content: content(lender),
  decidedAt: '2026-12-01T10:00:00.000Z',
  dueAt: '2026-12-31T10:00:00.000Z',
  remindAt: '2026-12-26T10:00:00.000Z',
  remindedAt: null,
  delivery: null,
  createdAt: '2026-12-01T10:00:00.000Z',
});

describe("a notice's lender and its ECOA agency", () => {
  it('a notice stored before the setting existed reports the Bureau its statement named', () => {
    expect(toNotice(record({ name: 'Harbor Lending', address: null })).lender).toEqual({
      name: 'Harbor Lending',
      address: null,
      ecoaAgency: 'Bureau of Consumer Financial Protection, 1700 G Street NW, Washington, DC 20552',
    });
  });

  it('a notice made since reports what it was made with: the agency, or null when none was set', () => {
    expect(toNotice(record({ name: 'Harbor Lending', address: null, ecoaAgency: null })).lender.ecoaAgency).toBeNull();
    expect(toNotice(record({ name: 'Harbor Lending', address: null, ecoaAgency: 'NCUA, Alexandria, VA' })).lender.ecoaAgency).toBe('NCUA, Alexandria, VA');
  });

  it('the statement ends with the agency and one full stop, or says it is not set', () => {
    const statement = (ecoaAgency: string | null) => noticeSections(content({ name: 'Harbor Lending', address: null, ecoaAgency })).at(-1)!.lines[0]!;
    expect(statement('Federal Trade Commission, Washington, DC 20580')).toMatch(/concerning this creditor is Federal Trade Commission, Washington, DC 20580\.$/);
    expect(statement('Agency, Washington, D.C.')).toMatch(/Washington, D\.C\.$/);
    expect(statement(null)).toMatch(/concerning this creditor is not set: the lender names it in the dashboard's settings\.$/);
  });
});
