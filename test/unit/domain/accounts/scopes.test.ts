import { describe, expect, it } from 'vitest';
import { escalationIssue, normaliseScopes, requestedKey, scopesAllow } from '../../../../src/domain/accounts/scopes.ts';

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
