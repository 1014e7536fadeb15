/**
 * What an account is opened with: the organisation's name and a contact email. One rule for every
 * way an account is made (the dashboard's sign-up, the operator's `account create`).
 */
import { textIssue } from '../text/textRule.ts';

const ACCOUNT_NAME_MAX_LENGTH = 200;
const EMAIL_MAX_LENGTH = 254; // RFC 5321's limit on a forward path, less the angle brackets

/** Shape only (one @, a dot in the domain, no spaces): whether a mailbox exists is not knowable here. */
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export interface DetailIssue {
  field: 'name' | 'email';
  message: string;
}

/** An email as it is stored and compared: trimmed and lower-cased (addresses are matched case-insensitively in practice). */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export function emailIssue(email: string): string | null {
  if (email.length > EMAIL_MAX_LENGTH) return `must be at most ${EMAIL_MAX_LENGTH} characters`;
  const text = textIssue(email);
  if (text) return text;
  return EMAIL.test(email) ? null : 'is not an email address';
}

/** Problems with an account's name and email (both already trimmed); empty when both are fine. */
export function accountDetailIssues(details: { name: string; email: string }): DetailIssue[] {
  const issues: DetailIssue[] = [];
  if (details.name.length === 0) issues.push({ field: 'name', message: 'must not be empty' });
  else if (details.name.length > ACCOUNT_NAME_MAX_LENGTH) issues.push({ field: 'name', message: `must be at most ${ACCOUNT_NAME_MAX_LENGTH} characters` });
  else {
    const text = textIssue(details.name);
    if (text) issues.push({ field: 'name', message: text });
  }
  const email = emailIssue(details.email);
  if (email) issues.push({ field: 'email', message: email });
  return issues;
}
