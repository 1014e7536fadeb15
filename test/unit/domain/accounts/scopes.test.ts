import { describe, expect, it } from 'vitest';
import { SCOPE_FAMILIES, escalationIssue, normaliseScopes, parseRequiredScope, requestedKey, scopeDeclarationIssues, scopesAllow, type DeclaredOperation } from '../../../../src/domain/accounts/scopes.ts';

describe('scopesAllow', () => {
  it('write implies read; read does not imply write; a family left out or none allows nothing; none needs nothing', () => {
    expect(scopesAllow({ quotes: 'write' }, { family: 'quotes', level: 'read' })).toBe(true);
    expect(scopesAllow({ quotes: 'write' }, { family: 'quotes', level: 'write' })).toBe(true);
    expect(scopesAllow({ quotes: 'read' }, { family: 'quotes', level: 'write' })).toBe(false);
    expect(scopesAllow({ quotes: 'none' }, { family: 'quotes', level: 'read' })).toBe(false);
    expect(scopesAllow({ events: 'write' }, { family: 'quotes', level: 'read' })).toBe(false);
    expect(scopesAllow({}, null)).toBe(true);
  });
});

describe('parseRequiredScope', () => {
  it('takes none or exactly <family>:<read|write> with a family of the list', () => {
    expect(parseRequiredScope('none')).toBeNull();
    expect(parseRequiredScope('quotes:read')).toEqual({ family: 'quotes', level: 'read' });
    expect(parseRequiredScope('apiKeys:write')).toEqual({ family: 'apiKeys', level: 'write' });
  });

  it('refuses a family not in the list, text around the scope, and a value that is not a string', () => {
    for (const declared of ['nosuch:read', 'quotes:admin', 'quotes', 'x-quotes:read', 'quotes:writer', 'quotes:read ', ['quotes:read'], 7, null, undefined]) {
      expect(parseRequiredScope(declared), JSON.stringify(declared)).toBeUndefined();
    }
  });
});

describe('requestedKey', () => {
  it('scopes make a restricted key (none dropped, families in order, null prototype); a role makes a role key', () => {
    const key = requestedKey({ scopes: { events: 'read', quotes: 'none', applications: 'write' } });
    expect(key).toEqual({ role: 'restricted', scopes: { applications: 'write', events: 'read' } });
    expect(Object.keys((key as { scopes: object }).scopes)).toEqual(['applications', 'events']);
    expect(Object.getPrototypeOf((key as { scopes: object }).scopes)).toBeNull();
    expect(requestedKey({ role: 'restricted', scopes: {} })).toEqual({ role: 'restricted', scopes: {} });
    expect(requestedKey({ role: 'member' })).toEqual({ role: 'member', scopes: null });
  });

  it('a role and scopes together, neither, or restricted without scopes is an issue with a pointer', () => {
    expect(requestedKey({ role: 'admin', scopes: { quotes: 'read' } })).toEqual({
      pointer: '/role',
      message: 'must be left out (or be "restricted") when scopes are given: a key has a role or scopes',
    });
    expect(requestedKey({})).toEqual({ pointer: '/role', message: 'is required (admin or member), unless scopes are given' });
    expect(requestedKey({ role: 'restricted' })).toEqual({ pointer: '/scopes', message: 'is required for a restricted key' });
  });
});

describe('escalationIssue', () => {
  const restricted = (scopes: Record<string, string>) => ({ role: 'restricted' as const, scopes: normaliseScopes(scopes) });

  it('an admin makes any key', () => {
    expect(escalationIssue({ role: 'admin', scopes: null }, { role: 'admin', scopes: null })).toBeNull();
    expect(escalationIssue({ role: 'admin', scopes: null }, restricted({ pricing: 'write' }))).toBeNull();
  });

  it('a restricted key makes restricted keys within its scopes only, never a role key', () => {
    const creator = restricted({ apiKeys: 'write', applications: 'write', events: 'read' });
    expect(escalationIssue(creator, restricted({ applications: 'read', events: 'read' }))).toBeNull();
    expect(escalationIssue(creator, restricted({ apiKeys: 'write' }))).toBeNull();
    expect(escalationIssue(creator, restricted({ events: 'write' }))).toContain('events:write');
    expect(escalationIssue(creator, restricted({ quotes: 'read', documents: 'write' }))).toContain('quotes:read, documents:write');
    expect(escalationIssue(creator, { role: 'member', scopes: null })).toBe(
      'A restricted key creates only restricted keys, with scopes it holds itself; it cannot create a member key.',
    );
    expect(escalationIssue(creator, { role: 'admin', scopes: null })).toBe(
      'A restricted key creates only restricted keys, with scopes it holds itself; it cannot create an admin key.',
    );
  });

  it('names every scope beyond the creator\'s, in the families\' order, and says why', () => {
    const creator = restricted({ apiKeys: 'write', events: 'read' });
    expect(escalationIssue(creator, restricted({ documents: 'write', quotes: 'read', events: 'read' }))).toBe(
      'This key does not hold quotes:read, documents:write; a key cannot grant more than the key creating it holds.',
    );
  });

  it('revoking follows the creating rule, and the refusal says revoke', () => {
    const actor = restricted({ apiKeys: 'write', events: 'read' });
    expect(escalationIssue(actor, restricted({ events: 'read' }), 'revoke')).toBeNull();
    expect(escalationIssue(actor, restricted({ quotes: 'read', events: 'write' }), 'revoke')).toBe(
      'This key does not hold quotes:read, events:write; a restricted key revokes only keys within its own scopes.',
    );
    expect(escalationIssue(actor, { role: 'member', scopes: null }, 'revoke')).toBe(
      'A restricted key revokes only restricted keys, with scopes it holds itself; it cannot revoke a member key.',
    );
    expect(escalationIssue({ role: 'member', scopes: null }, restricted({}), 'revoke')).toBe('A member key cannot revoke API keys.');
  });

  it('a member makes no key', () => {
    expect(escalationIssue({ role: 'member', scopes: null }, restricted({}))).toBe('A member key cannot create API keys.');
  });

  // The role decides (a role key's scopes mean nothing) and a record that does not add up grants
  // nothing: a key never opens more than a well-formed restricted key with its scopes would.
  it('fails closed on a holder whose role and scopes disagree', () => {
    const wide = { apiKeys: 'write', quotes: 'write' } as const;
    expect(escalationIssue({ role: 'member', scopes: normaliseScopes(wide) }, restricted({ quotes: 'read' }))).toBe('A member key cannot create API keys.');
    expect(escalationIssue({ role: 'restricted', scopes: null }, restricted({}))).toBe('A restricted key cannot create API keys.');
    const creator = restricted(wide);
    expect(escalationIssue(creator, { role: 'admin', scopes: normaliseScopes({}) }, 'revoke')).toContain('it cannot revoke an admin key');
    expect(escalationIssue(creator, { role: 'restricted', scopes: null }, 'revoke')).not.toBeNull();
  });
});

describe('scopeDeclarationIssues: an admin operation needs a scope no member operation needs', () => {
  const op = (where: string, requiredScope: unknown, requiredRole?: string, schemes = ['apiKey']): DeclaredOperation => ({ where, requiredScope, requiredRole, schemes, statuses: ['200', '403'] });
  const issues = (operations: DeclaredOperation[]) => scopeDeclarationIssues(operations, [...SCOPE_FAMILIES]);

  it('passes when the admin operations own a family or a level the member operations do not reach', () => {
    expect(issues([op('createApplication', 'applications:write'), op('waiveCondition', 'underwriting:write', 'admin')])).toEqual([]);
    expect(issues([op('listWebhooks', 'webhooks:read'), op('createWebhook', 'webhooks:write', 'admin')])).toEqual([]);
  });

  it('fails an admin operation whose scope, or a lower level of it, a member operation needs; or that needs none', () => {
    for (const scope of ['applications:write', 'applications:read', 'none']) {
      const found = issues([op('createApplication', 'applications:write'), op('waiveCondition', scope, 'admin')]);
      expect(found, scope).toHaveLength(1);
      expect(found[0]).toContain('waiveCondition needs the admin role but its x-required-scope is');
    }
  });

  it('says which scope an admin operation shares with the member operations, or that none is every key\'s', () => {
    const member = op('createApplication', 'applications:write');
    expect(issues([member, op('waiveCondition', 'applications:read', 'admin')])).toEqual([
      'waiveCondition needs the admin role but its x-required-scope is applications:read, which operations open to member keys need too: give it a scope no member operation needs',
    ]);
    expect(issues([member, op('waiveCondition', 'none', 'admin')])).toEqual([
      'waiveCondition needs the admin role but its x-required-scope is none, which every key holds: give it a scope no member operation needs',
    ]);
  });

  it('counts the highest level the member operations need, whichever comes first', () => {
    const admin = op('createWebhook', 'webhooks:write', 'admin');
    // A member operation open to every key (none) counts for no family.
    const members = [op('getAccount', 'none'), op('rotateWebhookSecret', 'webhooks:write'), op('listWebhooks', 'webhooks:read')];
    expect(issues([...members, admin])).toHaveLength(1);
    expect(issues([...members, admin])[0]).toContain('createWebhook needs the admin role');
  });

  it('fails an operation open to member keys that needs an admin-only family (demographics), however the member operations look', () => {
    expect(issues([op('getApplicationDemographics', 'demographics:read', 'admin')])).toEqual([]);
    expect(issues([op('getApplicationDemographics', 'demographics:read')])).toEqual([
      'getApplicationDemographics needs demographics:read, an admin-only family, but is open to member keys: add x-required-role: admin',
    ]);
    expect(issues([op('exportDemographics', 'demographics:write')])).toHaveLength(1);
  });

  it('fails an operation that declares no x-required-scope, or one of another form, naming the forms and families', () => {
    expect(issues([op('getQuote', undefined)])).toEqual(['getQuote declares no x-required-scope (use <family>:<read|write> or none)']);
    expect(issues([op('getQuote', 'quote:read')])).toEqual([
      `getQuote: x-required-scope "quote:read" is not none or <family>:<read|write> with a family of ${SCOPE_FAMILIES.join(', ')}`,
    ]);
    expect(issues([op('getQuote', 'quote:read')])[0]).toContain('with a family of quotes, applications, documents, ');
  });

  it('fails an operation that needs a scope but declares no 403; one that needs none owes no 403', () => {
    const without403 = (where: string, requiredScope: string): DeclaredOperation => ({ ...op(where, requiredScope), statuses: ['200', '401'] });
    expect(issues([without403('getQuote', 'quotes:read')])).toEqual([
      'getQuote needs quotes:read but declares no 403 response (a restricted key without it gets 403 scope_missing: $ref ScopeMissing.yaml or Forbidden.yaml)',
    ]);
    expect(issues([without403('getAccount', 'none')])).toEqual([]);
  });

  it('fails when the ApiKeyScopes schema\'s families are not the scope families, in any order', () => {
    const operations = [op('getQuote', 'quotes:read')];
    expect(scopeDeclarationIssues(operations, [...SCOPE_FAMILIES].reverse())).toEqual([]);
    const fewer = SCOPE_FAMILIES.filter((family) => family !== 'testMode');
    expect(scopeDeclarationIssues(operations, fewer)).toEqual([
      `the ApiKeyScopes schema's families (${fewer.join(', ')}) are not the scope families (${SCOPE_FAMILIES.join(', ')})`,
    ]);
    expect(scopeDeclarationIssues(operations, fewer)[0]).toContain('families (quotes, applications, ');
    expect(scopeDeclarationIssues(operations, fewer)[0]).toContain('scope families (quotes, applications, ');
  });

  it('fails an operation answering with demographic data unless it needs the admin role and demographics:read', () => {
    const demographic = (requiredRole: string | undefined, requiredScope = 'demographics:read'): DeclaredOperation => ({ ...op('exportHmdaLar', requiredScope, requiredRole), demographicData: true });
    const member = op('exportMortgages', 'exports:read');
    expect(issues([member, demographic(undefined)])).toEqual([
      "exportHmdaLar answers with applicants' demographic data (x-demographic-data) but does not need the admin role: add x-required-role: admin",
      'exportHmdaLar needs demographics:read, an admin-only family, but is open to member keys: add x-required-role: admin',
    ]);
    expect(issues([member, demographic('admin')])).toEqual([]);
    // The admin role with another admin-only scope is not enough: a restricted key made to export
    // mortgages (exports:write) would read the applicants' demographic data without demographics:read.
    expect(issues([member, demographic('admin', 'exports:write')])).toEqual([
      'exportHmdaLar answers with applicants\' demographic data (x-demographic-data) but needs "exports:write": make it x-required-scope: demographics:read',
    ]);
    expect(issues([{ ...demographic('admin'), demographicData: 'yes' }])).toEqual(['exportHmdaLar: x-demographic-data must be true when present, got "yes"']);
  });

  it('does not count an operation that takes no API key as a member operation', () => {
    expect(issues([op('verifyBank', 'none', undefined, ['bankToken']), op('createBankToken', 'bankVerifications:write', 'admin')])).toEqual([]);
    // Only the bank-token operation's own scope is wrong; the admin operation is not flagged because of it.
    expect(issues([op('listWebhooks', 'webhooks:write', undefined, ['bankToken']), op('createWebhook', 'webhooks:write', 'admin')])).toEqual([
      'listWebhooks takes no API key, so its x-required-scope must be none',
    ]);
  });

  it('fails an x-required-role other than admin', () => {
    expect(issues([op('updatePricing', 'pricing:write', 'owner')])).toEqual(['updatePricing: x-required-role "owner" is not admin (leave it out for an operation any key of the account may call)']);
  });
});
