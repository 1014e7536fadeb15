/**
 * Restricted API keys' scopes: per resource family `none`, `read` or `write` (`write` implies
 * `read`), and what each operation of the contract needs (`x-required-scope`: `<family>:<level>`,
 * or `none` for an operation any key of the account may call).
 *
 * A key has either a role (`admin`, `member`: the role decides, as it always has) or scopes (role
 * `restricted`: the scopes alone decide, whatever `x-required-role` says). A key never grants more
 * than its creator holds: a restricted key creates only restricted keys within its own scopes.
 */
import type { components } from '../../../generated/api.d.ts';

export type ApiKeyScopes = components['schemas']['ApiKeyScopes'];
export type ScopeFamily = keyof ApiKeyScopes;
type ScopeLevel = components['schemas']['ScopeLevel'];

/** Every family, in the order people read them (the contract's ApiKeyScopes lists the same; check-scopes holds them together). */
export const SCOPE_FAMILIES = [
  'quotes',
  'applications',
  'documents',
  'bankVerifications',
  'webhooks',
  'events',
  'exports',
  'pricing',
  'underwriting',
  'apiKeys',
  'audit',
  'rateLocks',
  'requestLogs',
  'testMode',
  'demographics',
] as const satisfies readonly ScopeFamily[];

/**
 * Families only admin operations may ask for: what they open is data no member key may read, so
 * an operation open to members that names one is a mistake check:scopes refuses. `demographics`:
 * the applicants' HMDA ethnicity, race, sex and age (Regulation C keeps them from those who
 * decide, 12 CFR 1002.5 and 1003.4), read only by admins.
 */
const ADMIN_ONLY_FAMILIES: readonly ScopeFamily[] = ['demographics'];

// Every family of the schema is in the list (a family added to the contract and not here fails to compile).
type Missing = Exclude<ScopeFamily, (typeof SCOPE_FAMILIES)[number]>;
const everyFamilyListed: [Missing] extends [never] ? true : Missing = true;
void everyFamilyListed;

const RANK: Record<ScopeLevel, number> = { none: 0, read: 1, write: 2 };

/** What an operation needs: nothing beyond a valid key of the account, or a level of a family. */
export type RequiredScope = { family: ScopeFamily; level: 'read' | 'write' } | null;

const FAMILY_SET = new Set<string>(SCOPE_FAMILIES);

/** The declared `x-required-scope`, or undefined when it is not one of the allowed forms. */
export function parseRequiredScope(declared: unknown): RequiredScope | undefined {
  if (declared === 'none') return null;
  if (typeof declared !== 'string') return undefined;
  const match = /^([A-Za-z]+):(read|write)$/.exec(declared);
  if (!match || !FAMILY_SET.has(match[1]!)) return undefined;
  return { family: match[1] as ScopeFamily, level: match[2] as 'read' | 'write' };
}

export function formatScope(scope: NonNullable<RequiredScope>): string {
  return `${scope.family}:${scope.level}`;
}

/** Whether `scopes` allow what `required` needs (`write` covers `read`). */
export function scopesAllow(scopes: ApiKeyScopes, required: RequiredScope): boolean {
  if (required === null) return true;
  return RANK[scopes[required.family] ?? 'none'] >= RANK[required.level];
}

/** The scopes as stored and shown: only the families a key may read or write, in the families' order, on a null prototype. */
export function normaliseScopes(scopes: ApiKeyScopes): ApiKeyScopes {
  const normal = Object.create(null) as ApiKeyScopes;
  for (const family of SCOPE_FAMILIES) {
    const level = scopes[family];
    if (level === 'read' || level === 'write') normal[family] = level;
  }
  return normal;
}

/** The scopes of `requested` that `holder` does not hold, as `family:level` (empty when none). */
function scopesBeyond(requested: ApiKeyScopes, holder: ApiKeyScopes): string[] {
  const beyond: string[] = [];
  for (const family of SCOPE_FAMILIES) {
    const level = requested[family];
    if ((level === 'read' || level === 'write') && !scopesAllow(holder, { family, level })) beyond.push(`${family}:${level}`);
  }
  return beyond;
}

/** An operation of the contract, as the scope check reads it. */
export interface DeclaredOperation {
  /** `GET /v1/quotes/{quoteId}`, for messages. */
  where: string;
  requiredScope: unknown;
  /** Its `x-required-role` (`admin`, or undefined when any key of the account may call it). */
  requiredRole: unknown;
  /** The security schemes the operation accepts. */
  schemes: string[];
  /** The response statuses it declares. */
  statuses: string[];
  /** Its `x-demographic-data` (`true` when its answer holds applicants' HMDA demographic data). */
  demographicData?: unknown;
}

/**
 * The scopes a restricted key needs to do what a member key does: per family, the highest level an
 * operation open to members (no `x-required-role: admin`) asks. A key made to stand in for a
 * member integration holds these, so none of them may open an admin operation.
 */
function memberScopes(operations: DeclaredOperation[]): ApiKeyScopes {
  const held = Object.create(null) as ApiKeyScopes;
  for (const op of operations) {
    if (op.requiredRole === 'admin' || !op.schemes.includes('apiKey')) continue;
    const parsed = parseRequiredScope(op.requiredScope);
    if (parsed && !scopesAllow(held, parsed)) held[parsed.family] = parsed.level;
  }
  return held;
}

/**
 * What is wrong with the operations' `x-required-scope` (empty when nothing): every operation
 * declares one of the allowed forms, an operation that takes no API key (the bank partners'
 * `POST /v1/banks/verify`) declares `none`, since scopes are an API key's, an operation that
 * needs a scope declares the 403 a restricted key without it gets, and an operation that needs the
 * admin role needs a scope no member operation needs (else a restricted key made for a member's
 * work, such as an intake integration's `applications:write`, would reach it). An operation whose
 * answer holds applicants' demographic data (`x-demographic-data: true`: the HMDA register and its
 * check) needs the admin role (Regulation C data an examiner reads, not a member integration's)
 * and `demographics:read`, the admin-only family a restricted key needs for that data anywhere.
 */
export function scopeDeclarationIssues(operations: DeclaredOperation[], schemaFamilies: string[]): string[] {
  const issues: string[] = [];
  const members = memberScopes(operations);
  for (const op of operations) {
    if (op.requiredScope === undefined) {
      issues.push(`${op.where} declares no x-required-scope (use <family>:<read|write> or none)`);
      continue;
    }
    if (op.demographicData !== undefined && op.demographicData !== true) {
      issues.push(`${op.where}: x-demographic-data must be true when present, got ${JSON.stringify(op.demographicData)}`);
    } else if (op.demographicData === true && op.requiredRole !== 'admin') {
      issues.push(`${op.where} answers with applicants' demographic data (x-demographic-data) but does not need the admin role: add x-required-role: admin`);
    } else if (op.demographicData === true && op.requiredScope !== 'demographics:read') {
      // A restricted key reads demographic data only with the family made for it, wherever the data comes out.
      issues.push(`${op.where} answers with applicants' demographic data (x-demographic-data) but needs ${JSON.stringify(op.requiredScope)}: make it x-required-scope: demographics:read`);
    }
    if (op.requiredRole !== undefined && op.requiredRole !== 'admin') {
      issues.push(`${op.where}: x-required-role ${JSON.stringify(op.requiredRole)} is not admin (leave it out for an operation any key of the account may call)`);
    }
    const parsed = parseRequiredScope(op.requiredScope);
    if (parsed === undefined) {
      issues.push(`${op.where}: x-required-scope ${JSON.stringify(op.requiredScope)} is not none or <family>:<read|write> with a family of ${SCOPE_FAMILIES.join(', ')}`);
    } else if (parsed !== null && !op.schemes.includes('apiKey')) {
      issues.push(`${op.where} takes no API key, so its x-required-scope must be none`);
    } else if (parsed !== null && !op.statuses.includes('403')) {
      issues.push(`${op.where} needs ${formatScope(parsed)} but declares no 403 response (a restricted key without it gets 403 scope_missing: $ref ScopeMissing.yaml or Forbidden.yaml)`);
    } else if (parsed !== null && ADMIN_ONLY_FAMILIES.includes(parsed.family) && op.requiredRole !== 'admin') {
      issues.push(`${op.where} needs ${formatScope(parsed)}, an admin-only family, but is open to member keys: add x-required-role: admin`);
    } else if (op.requiredRole === 'admin' && scopesAllow(members, parsed)) {
      const held = parsed === null ? 'none, which every key holds' : `${formatScope(parsed)}, which operations open to member keys need too`;
      issues.push(`${op.where} needs the admin role but its x-required-scope is ${held}: give it a scope no member operation needs`);
    }
  }
  const listed = [...SCOPE_FAMILIES].sort().join(',');
  if ([...schemaFamilies].sort().join(',') !== listed) {
    issues.push(`the ApiKeyScopes schema's families (${schemaFamilies.join(', ')}) are not the scope families (${SCOPE_FAMILIES.join(', ')})`);
  }
  return issues;
}

/** What a key (or the user making one) holds: a role, and for a restricted key its scopes. */
export interface KeyHolder {
  role: components['schemas']['ApiKeyRole'];
  scopes: ApiKeyScopes | null;
}

/** A new key's request: a role, or scopes (role left out or `restricted`). */
export interface KeyRequest {
  role?: components['schemas']['ApiKeyRole'];
  scopes?: ApiKeyScopes;
}

/**
 * The role and scopes a request asks for, or the field issue that makes it ambiguous (the
 * contract's anyOf already wants one of the two; this says which combinations mean something).
 */
export function requestedKey(request: KeyRequest): KeyHolder | { pointer: string; message: string } {
  if (request.scopes !== undefined) {
    if (request.role !== undefined && request.role !== 'restricted') {
      return { pointer: '/role', message: 'must be left out (or be "restricted") when scopes are given: a key has a role or scopes' };
    }
    return { role: 'restricted', scopes: normaliseScopes(request.scopes) };
  }
  if (request.role === undefined) return { pointer: '/role', message: 'is required (admin or member), unless scopes are given' };
  if (request.role === 'restricted') return { pointer: '/scopes', message: 'is required for a restricted key' };
  return { role: request.role, scopes: null };
}

/**
 * Why `creator` may not make a key holding `wanted` (null when it may): an admin makes any key; a
 * restricted key makes only restricted keys, within the scopes it holds (never an admin or member
 * key, whose roles reach beyond any set of scopes); a member makes none. Revoking follows the same
 * rule (`action` revoke): a key revokes only keys it could have made.
 */
export function escalationIssue(creator: KeyHolder, wanted: KeyHolder, action: 'create' | 'revoke' = 'create'): string | null {
  if (creator.role === 'admin') return null;
  if (creator.role !== 'restricted' || creator.scopes === null) return `A ${creator.role} key cannot ${action} API keys.`;
  if (wanted.role !== 'restricted' || wanted.scopes === null) {
    return `A restricted key ${action}s only restricted keys, with scopes it holds itself; it cannot ${action} ${wanted.role === 'admin' ? 'an admin' : 'a member'} key.`;
  }
  const beyond = scopesBeyond(wanted.scopes, creator.scopes);
  if (beyond.length === 0) return null;
  return action === 'create'
    ? `This key does not hold ${beyond.join(', ')}; a key cannot grant more than the key creating it holds.`
    : `This key does not hold ${beyond.join(', ')}; a restricted key revokes only keys within its own scopes.`;
}
