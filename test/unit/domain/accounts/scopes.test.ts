import { describe, expect, it } from 'vitest';
import { SCOPE_FAMILIES, escalationIssue, normaliseScopes, requestedKey, scopeDeclarationIssues, scopesAllow, type DeclaredOperation } from '../../../../src/domain/accounts/scopes.ts';

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
    expect(requestedKey({ role: 'admin', scopes: { quotes: 'read' } })).toMatchObject({ pointer: '/role' });
    expect(requestedKey({})).toMatchObject({ pointer: '/role' });
    expect(requestedKey({ role: 'restricted' })).toMatchObject({ pointer: '/scopes' });
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
    expect(escalationIssue(creator, { role: 'member', scopes: null })).toContain('only restricted keys');
    expect(escalationIssue(creator, { role: 'admin', scopes: null })).toContain('an admin key');
  });

  it('a member makes no key', () => {
    expect(escalationIssue({ role: 'member', scopes: null }, restricted({}))).toContain('cannot create');
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
