/**
 * The operator's commands. The same functions run in the CLI process (server stopped) or inside
 * the server (through the admin socket), so the running server sees each change at once and the
 * database file never has two writers.
 */
import type { AppContext } from '../context.ts';
import { apiKeyNameIssue } from '../domain/accounts/apiKeyFormat.ts';
import { AppError } from '../errors.ts';
import { accountEnvironment, createAccount, createApiKey, revokeApiKey } from '../services/accounts.ts';
import type { ApiKeyRole } from '../store/apiKeys.ts';
import { backupCommands } from './backupCommands.ts';
import { bankPartnerCommands } from './bankPartnerCommands.ts';
import { AdminCommandError, type AdminCommand, type Flags } from './command.ts';
import { secretsCommands } from './secretsCommands.ts';

export { AdminCommandError, type AdminCommand, type Flags } from './command.ts';

/** The spec's ApiKeyRole values (test/unit/contract/specEnums.test.ts keeps them equal). */
export const API_KEY_ROLES: readonly ApiKeyRole[] = ['admin', 'member'];

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
      role: { required: true, description: 'admin or member' },
      mode: { description: 'live (default) or test: the environment the key acts in' },
      name: { description: 'a label for the key (default: "Created by operator")' },
    },
    async run(ctx, flags) {
      const role = flags.role!;
      if (!(API_KEY_ROLES as readonly string[]).includes(role)) throw new AdminCommandError(`--role must be admin or member, got "${role}"`);
      const mode = flags.mode ?? 'live';
      if (mode !== 'live' && mode !== 'test') throw new AdminCommandError(`--mode must be live or test, got "${mode}"`);
      const nameProblem = flags.name === undefined ? null : apiKeyNameIssue(flags.name.trim());
      if (nameProblem) throw new AdminCommandError(`--name ${nameProblem}`);
      const created = await createApiKey(ctx, accountEnvironment(flags.account!, mode), {
        role: role as ApiKeyRole,
        name: flags.name?.trim() || 'Created by operator',
      });
      return { keyId: created.record.keyId, apiKey: created.apiKey };
    },
  },
  'key revoke': {
    description: 'Revoke an API key.',
    flags: { key: { required: true, description: 'the key id (key-…)' } },
    async run(ctx, flags) {
      const revoked = await revokeApiKey(ctx, null, flags.key!);
      return { keyId: revoked.keyId, revokedAt: revoked.revokedAt };
    },
  },
  ...bankPartnerCommands,
  ...secretsCommands,
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
    return await command.run(ctx!, flags);
  } catch (err) {
    if (err instanceof AppError) throw new AdminCommandError(err.detail);
    throw err;
  }
}
