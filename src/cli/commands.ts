/**
 * The operator's commands. The same functions run in the CLI process (server stopped) or inside
 * the server (through the admin socket), so the running server sees each change at once and the
 * database file never has two writers.
 */
import { createAccount, createApiKey, revokeApiKey } from '../services/accounts.ts';
import type { AppServices } from '../services/appServices.ts';
import { ApiProblem } from '../http/problem.ts';
import { bankPartnerCommands } from './bankPartnerCommands.ts';
import { secretsCommands } from './secretsCommands.ts';

export class AdminCommandError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AdminCommandError';
  }
}

export type AdminServices = Pick<AppServices, 'store' | 'clock' | 'config'>;
export type Flags = Record<string, string | undefined>;

export interface AdminCommand {
  /** Flags it takes; those marked required must be present. */
  flags: Record<string, { required?: boolean; description: string }>;
  description: string;
  run(services: AdminServices, flags: Flags): Promise<Record<string, unknown>>;
}

const ROLES = ['admin', 'member'];
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export const adminCommands: Record<string, AdminCommand> = {
  'account create': {
    description: 'Create an account and its first admin API key.',
    flags: {
      name: { required: true, description: 'the account holder, e.g. "Harbor Lending"' },
      email: { required: true, description: 'contact email' },
    },
    async run({ store, clock }, flags) {
      const name = flags.name!.trim();
      const email = flags.email!.trim();
      if (!name) throw new AdminCommandError('--name must not be empty');
      if (!EMAIL.test(email)) throw new AdminCommandError(`--email "${email}" is not an email address`);
      const { account, firstKey } = await createAccount(store, clock, { name, email });
      return { accountId: account.accountId, keyId: firstKey.record.keyId, apiKey: firstKey.apiKey };
    },
  },
  'key create': {
    description: 'Create an API key for an account.',
    flags: {
      account: { required: true, description: 'the account id (acc-…)' },
      role: { required: true, description: 'admin or member' },
      name: { description: 'a label for the key (default: "Created by operator")' },
    },
    async run({ store, clock }, flags) {
      const role = flags.role!;
      if (!ROLES.includes(role)) throw new AdminCommandError(`--role must be admin or member, got "${role}"`);
      const created = await createApiKey(store, clock, flags.account!, {
        role: role as 'admin' | 'member',
        name: flags.name?.trim() || 'Created by operator',
      });
      return { keyId: created.record.keyId, apiKey: created.apiKey };
    },
  },
  'key revoke': {
    description: 'Revoke an API key.',
    flags: { key: { required: true, description: 'the key id (key-…)' } },
    async run({ store, clock }, flags) {
      const revoked = await revokeApiKey(store, clock, null, flags.key!);
      return { keyId: revoked.keyId, revokedAt: revoked.revokedAt };
    },
  },
  ...bankPartnerCommands,
  ...secretsCommands,
};

/** Runs a parsed command; business refusals come back as AdminCommandError with the problem's detail. */
export async function runAdminCommand(services: AdminServices, name: string, flags: Flags): Promise<Record<string, unknown>> {
  const command = adminCommands[name];
  if (!command) throw new AdminCommandError(`Unknown command "${name}". Commands: ${Object.keys(adminCommands).join('; ')}`);
  for (const [flag, spec] of Object.entries(command.flags)) {
    if (spec.required && !flags[flag]) throw new AdminCommandError(`${name} needs --${flag} (${spec.description})`);
  }
  const unknown = Object.keys(flags).filter((flag) => !(flag in command.flags));
  if (unknown.length) throw new AdminCommandError(`${name} does not take --${unknown.join(', --')}`);
  try {
    return await command.run(services, flags);
  } catch (err) {
    if (err instanceof ApiProblem) throw new AdminCommandError(err.detail);
    throw err;
  }
}
