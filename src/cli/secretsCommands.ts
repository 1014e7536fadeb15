/**
 * The operator's commands for the key that seals secrets at rest (webhook signing secrets, bank
 * partner credentials): its status, and its rotation. Run through the admin socket when a server
 * holds the data directory, so the running server re-seals and switches keys at once.
 */
import { rotateSecretsKey, secretsKeyStatus } from '../services/secretsKey.ts';
import type { AdminCommand } from './command.ts';

export const secretsCommands: Record<string, AdminCommand> = {
  'secrets status': {
    description: 'Show where the key that seals secrets at rest comes from, its id, and how many sealed values there are.',
    flags: {},
    run: (ctx) => secretsKeyStatus(ctx),
  },
  'secrets rotate-key': {
    description:
      'Seal every stored secret under a new key: writes the new key beside the key file, re-seals, then replaces the file ' +
      '(with SECRETS_KEY from the environment, prints how to rotate it instead).',
    flags: {},
    run: (ctx) => rotateSecretsKey(ctx),
  },
};
