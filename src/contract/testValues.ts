/**
 * The documented test values: the spec's `x-test-values`, declared once and read here by the
 * service's test mode and by the mock front, so the table partners read, the mock's answers and
 * test mode's answers cannot drift apart.
 */
import { loadBundledSpec } from './spec.ts';

/** What the test-mode sandbox bank does for a documented account number. */
export type TestBankBehaviour = 'account_of_token_holder' | 'other_holder' | 'closed' | 'partner_unavailable';

export interface TestBankAccount {
  accountNumber: string;
  behaviour: TestBankBehaviour;
  /** For `other_holder`: the name the bank holds the account under. */
  holderName?: string;
  description: string;
  /** The documented answer of `POST /v1/banks/verify`: a status and a named example or a problem code. */
  answer: { status: number; example?: string; code?: string };
}

interface TestApplicant {
  outcome: 'approved' | 'referred' | 'declined';
  /** A `POST /v1/applications` body. */
  request: Record<string, unknown>;
}

export interface TestValues {
  bankAccounts: TestBankAccount[];
  applicants: TestApplicant[];
}

const BEHAVIOURS: readonly TestBankBehaviour[] = ['account_of_token_holder', 'other_holder', 'closed', 'partner_unavailable'];

let cached: TestValues | undefined;

/** The spec's test values; throws at start when the declaration is malformed (a maintainer's mistake). */
export function testValues(): TestValues {
  if (cached) return cached;
  const declared = (loadBundledSpec() as unknown as { 'x-test-values'?: TestValues })['x-test-values'];
  if (!declared || !Array.isArray(declared.bankAccounts) || !Array.isArray(declared.applicants)) {
    throw new Error('openapi/openapi.yaml must declare x-test-values with bankAccounts and applicants');
  }
  for (const account of declared.bankAccounts) {
    if (!BEHAVIOURS.includes(account.behaviour)) throw new Error(`x-test-values: unknown behaviour "${account.behaviour}"`);
    if (account.behaviour === 'other_holder' && !account.holderName) throw new Error('x-test-values: other_holder needs holderName');
  }
  cached = declared;
  return cached;
}

/** The documented test account of a number, if it is one. */
export function testBankAccount(accountNumber: string): TestBankAccount | undefined {
  return testValues().bankAccounts.find((a) => a.accountNumber === accountNumber);
}
