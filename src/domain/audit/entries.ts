/**
 * What the audit log records, with no I/O: the actions, the guard that keeps secrets out of an
 * entry's change, and an entry as an NDJSON line or a CSV row.
 */
import { neutraliseFormula } from '../exports/csv.ts';
import type { AuditChange, AuditEntry } from './chain.ts';

/**
 * The actions recorded (docs/operators/audit-log.md lists who records each). Named
 * `<resource>.<what happened>`; other use cases add theirs here.
 */
export type AuditAction =
  | 'account.created'
  | 'user.signedIn'
  | 'user.signInFailed'
  | 'user.signedOut'
  | 'apiKey.created'
  | 'apiKey.revoked'
  | 'apiKey.escalationRefused'
  | 'webhook.created'
  | 'webhook.updated'
  | 'webhook.enabled'
  | 'webhook.disabled'
  | 'webhook.deleted'
  | 'webhook.secretRotated'
  | 'webhook.testSent'
  | 'webhook.deliveryRetried'
  | 'webhook.recovered'
  | 'team.invitationCreated'
  | 'team.invitationRevoked'
  | 'team.invitationAccepted'
  | 'team.roleChanged'
  | 'team.userRemoved'
  | 'pricing.updated'
  | 'underwriting.updated'
  | 'exportFormat.created'
  | 'exportFormat.replaced'
  | 'exportFormat.deleted'
  | 'export.run'
  | 'document.downloaded'
  | 'bankToken.issued'
  | 'testData.deleted'
  | 'application.approved'
  | 'application.declined'
  | 'mfa.enrolled'
  | 'mfa.failed'
  | 'mfa.recoveryCodeUsed'
  | 'mfa.recoveryCodesRegenerated'
  | 'mfa.disabled'
  | 'mfa.reset'
  | 'account.mfaRequirementChanged'
  | 'account.apiVersionUpgraded'
  | 'account.apiVersionRolledBack'
  | 'account.lenderUpdated'
  | 'notice.delivered'
  | 'condition.added'
  | 'condition.satisfied'
  | 'condition.waived'
  | 'loanEstimate.delivered'
  | 'rateLock.created'
  | 'rateLock.extended'
  | 'rateLock.cancelled'
  | 'testClock.advanced'
  | 'testClock.reset';

/** Member names whose values are never written into an entry, whatever a caller passes. */
const SECRET_NAMES = /secret|password|token|apikey|accountnumber|credential|totp|recoverycode/i;

/**
 * `value` with every member named like a secret replaced by "[redacted]", at every depth. The
 * members of a `scopes` object are scope families (`apiKeys: "write"`), not secrets: kept.
 */
export function withoutSecrets(value: unknown, parent?: string): unknown {
  if (Array.isArray(value)) return value.map((item) => withoutSecrets(item));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = Object.create(null);
  for (const [key, item] of Object.entries(value)) {
    const kept = parent === 'scopes' && typeof item === 'string';
    out[key] = !kept && SECRET_NAMES.test(key) ? '[redacted]' : withoutSecrets(item, key);
  }
  return out;
}

/** A change as recorded: absent sides are null, secrets redacted. */
export function recordedChange(change: Partial<AuditChange> | null | undefined): AuditChange | null {
  if (!change) return null;
  return { before: withoutSecrets(change.before ?? null), after: withoutSecrets(change.after ?? null) };
}

/** The CSV export's columns, in order. */
const AUDIT_CSV_COLUMNS = [
  'auditEventId',
  'createdAt',
  'actorType',
  'actorId',
  'actorName',
  'action',
  'targetType',
  'targetId',
  'outcome',
  'clientAddress',
  'userAgent',
  'requestId',
  'change',
  'previousHash',
  'hash',
] as const;

/** One RFC 4180 cell: quoted when it holds a quote, comma or line break; a formula's lead neutralised. */
function csvCell(value: string | number | null): string {
  if (value === null) return '';
  const text = typeof value === 'number' ? String(value) : neutraliseFormula(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** The CSV header line (with CRLF). */
export function auditCsvHeader(): string {
  return AUDIT_CSV_COLUMNS.join(',') + '\r\n';
}

/** One entry as a CSV line (with CRLF); `change` is its JSON text. */
export function auditCsvRow(entry: AuditEntry): string {
  const cells = [
    entry.auditEventId,
    entry.occurredAt,
    entry.actor.type,
    entry.actor.id,
    entry.actor.name,
    entry.action,
    entry.target.type,
    entry.target.id,
    entry.outcome,
    entry.clientAddress,
    entry.userAgent,
    entry.requestId,
    entry.change === null ? null : JSON.stringify(entry.change),
    entry.prevHash,
    entry.hash,
  ];
  return cells.map(csvCell).join(',') + '\r\n';
}
