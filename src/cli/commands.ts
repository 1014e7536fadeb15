/**
 * The operator's commands. The same functions run in the CLI process (server stopped) or inside
 * the server (through the admin socket), so the running server sees each change at once and the
 * database file never has two writers.
 */
import type { AppContext } from '../context.ts';
import { apiKeyNameIssue } from '../domain/accounts/apiKeyFormat.ts';
import { AppError } from '../errors.ts';
import { ADMIN, accountEnvironment, createAccount, createApiKey, revokeApiKey } from '../services/accounts.ts';
import { parseRequiredScope, SCOPE_FAMILIES, type ApiKeyScopes } from '../domain/accounts/scopes.ts';
import type { ApiKeyRole } from '../store/apiKeys.ts';
import { CLI_ORIGIN, withOrigin } from '../services/audit.ts';
import { auditCommands } from './auditCommands.ts';
import { resetMfaByOperator } from '../services/mfa.ts';
import { backupCommands } from './backupCommands.ts';
import { bankPartnerCommands } from './bankPartnerCommands.ts';
import { AdminCommandError, type AdminCommand, type Flags } from './command.ts';
import { secretsCommands } from './secretsCommands.ts';

export { AdminCommandError, type AdminCommand, type Flags } from './command.ts';

/** The spec's ApiKeyRole values (test/unit/contract/specEnums.test.ts keeps them equal). */
export const API_KEY_ROLES: readonly ApiKeyRole[] = ['admin', 'member', 'restricted'];

/** `applications:read,events:read` as scopes (null prototype: the families come from the operator's input). */
function scopesFlag(text: string): ApiKeyScopes {
  const scopes = Object.create(null) as ApiKeyScopes;
  for (const part of text.split(',').map((p) => p.trim()).filter((p) => p !== '')) {
    const scope = parseRequiredScope(part);
    if (!scope) throw new AdminCommandError(`--scopes: "${part}" is not <family>:<read|write> (families: ${SCOPE_FAMILIES.join(', ')})`);
    scopes[scope.family] = scope.level;
  }
  return scopes;
}

export const adminCommands: Record<string, AdminCommand> = {
  'account create': {
    description: 'Create an account and the first admin API key of its live and of its test environment.',
    flags: {
      name: { required: true, description: 'the account holder, e.g. "Harbor Lending"' },
      email: { required: true, description: 'contact email' },
    },
    async run(ctx, flags) {
      const name = flags.name!.trim();
      const email = flags.email!.trim();
      // The rules are the use case's (the dashboard's sign-up opens accounts with the same one); its
      // pointers are named here as the flags they came from.
      const { account, firstKey, firstTestKey } = await createAccount(ctx, { name, email }).catch((err: unknown) => {
        const issue = err instanceof AppError && err.code === 'validation_failed' ? err.facts.errors?.[0] : undefined;
        if (issue?.pointer === '/email') throw new AdminCommandError(`--email "${email}" ${issue.message}`);
        if (issue?.pointer === '/name') throw new AdminCommandError(`--name ${issue.message}`);
        throw err;
      });
      return {
        accountId: account.accountId,
        keyId: firstKey.record.keyId,
        apiKey: firstKey.apiKey,
        testKeyId: firstTestKey.record.keyId,
        testApiKey: firstTestKey.apiKey,
      };
    },
  },
  'key create': {
    description: 'Create an API key for an account.',
    flags: {
      account: { required: true, description: 'the account id (acc-…)' },
      role: { description: 'admin or member (or restricted, implied by --scopes)' },
      scopes: { description: 'a restricted key\'s scopes instead of a role, e.g. applications:read,events:read' },
      mode: { description: 'live (default) or test: the environment the key acts in' },
      name: { description: 'a label for the key (default: "Created by operator")' },
    },
    async run(ctx, flags) {
      const role = flags.role;
      if (role !== undefined && !(API_KEY_ROLES as readonly string[]).includes(role)) {
        throw new AdminCommandError(`--role must be admin, member or restricted, got "${role}"`);
      }
      if (role === undefined && flags.scopes === undefined) throw new AdminCommandError('give --role admin|member, or --scopes for a restricted key');
      const scopes = flags.scopes === undefined ? undefined : scopesFlag(flags.scopes);
      const mode = flags.mode ?? 'live';
      if (mode !== 'live' && mode !== 'test') throw new AdminCommandError(`--mode must be live or test, got "${mode}"`);
      const nameProblem = flags.name === undefined ? null : apiKeyNameIssue(flags.name.trim());
      if (nameProblem) throw new AdminCommandError(`--name ${nameProblem}`);
      // The operator holds every scope, as an admin does.
      const created = await createApiKey(
        ctx,
        accountEnvironment(flags.account!, mode),
        { role: role as ApiKeyRole | undefined, scopes, name: flags.name?.trim() || 'Created by operator' },
        ADMIN,
      ).catch((err: unknown) => {
        const issue = err instanceof AppError && err.code === 'validation_failed' ? err.facts.errors?.[0] : undefined;
        if (issue) throw new AdminCommandError(`--${issue.pointer.slice(1)} ${issue.message}`);
        throw err;
      });
      return { keyId: created.record.keyId, apiKey: created.apiKey };
    },
  },
  'key revoke': {
    description: 'Revoke an API key.',
    flags: { key: { required: true, description: 'the key id (key-…)' } },
    async run(ctx, flags) {
      const revoked = await revokeApiKey(ctx, null, flags.key!, ADMIN);
      return { keyId: revoked.keyId, revokedAt: revoked.revokedAt };
    },
  },
  'user reset-mfa': {
    description: "Remove a dashboard user's two-step verification and recovery codes, and end their sessions (a lost phone with no admin left to reset it).",
    flags: { email: { required: true, description: "the user's email" } },
    async run(ctx, flags) {
      const user = await resetMfaByOperator(ctx, flags.email!.trim());
      return { userId: user.userId, accountId: user.accountId, email: user.email };
    },
  },
  ...bankPartnerCommands,
  ...secretsCommands,
  ...auditCommands,
  ...backupCommands,
};

/** Runs a parsed command; business refusals come back as AdminCommandError with the problem's detail. */
export async function runAdminCommand(ctx: AppContext | null, name: string, flags: Flags): Promise<Record<string, unknown>> {
  const command = Object.hasOwn(adminCommands, name) ? adminCommands[name] : undefined;
  if (!command) throw new AdminCommandError(`Unknown command "${name}". Commands: ${Object.keys(adminCommands).join('; ')}`);
  for (const [flag, spec] of Object.entries(command.flags)) {
    if (spec.required && !flags[flag]) throw new AdminCommandError(`${name} needs --${flag} (${spec.description})`);
  }
  const unknown = Object.keys(flags).filter((flag) => !Object.hasOwn(command.flags, flag));
  if (unknown.length) throw new AdminCommandError(`${name} does not take --${unknown.join(', --')}`);
  if (ctx === null && !command.offline) throw new Error(`${name} needs the store`);
  if (ctx !== null && command.offline) throw new AdminCommandError(`${name} runs in the command line only, never in the server`);
  try {
    // The operator is the actor of every change a command makes (the audit log's `cli`); an
    // offline command (restore) has no store and no context.
    return await command.run((ctx && withOrigin(ctx, CLI_ORIGIN))!, flags);
  } catch (err) {
    if (err instanceof AppError) throw new AdminCommandError(err.detail);
    throw err;
  }
}
