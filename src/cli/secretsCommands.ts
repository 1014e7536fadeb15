/**
 * The operator's commands for the key that seals secrets at rest (webhook signing secrets, bank
 * partner credentials): its status, and its rotation. Run through the admin socket when a server
 * holds the data directory, so the running server re-seals and switches keys at once.
 */
import type { SqlJsStoreExtra } from '../store/engine/sqljsStore.ts';
import { SecretsKeyFromEnvironmentError } from '../store/engine/sqljsStore.ts';
import type { Store } from '../store/store.ts';
import { problems } from '../http/problem.ts';
import type { AdminCommand } from './commands.ts';

function sealingStore(store: Store): SqlJsStoreExtra {
  const extra = store as Store & Partial<SqlJsStoreExtra>;
  if (typeof extra.rotateSecretsKey !== 'function' || typeof extra.secretsStatus !== 'function') {
    throw problems.unprocessable('secrets_key_unmanaged', 'this store engine does not manage a secrets key');
  }
  return extra as SqlJsStoreExtra;
}

export const secretsCommands: Record<string, AdminCommand> = {
  'secrets status': {
    description: 'Show where the key that seals secrets at rest comes from, its id, and how many sealed values there are.',
    flags: {},
    async run({ store }) {
      return { ...(await sealingStore(store).secretsStatus()) };
    },
  },
  'secrets rotate-key': {
    description:
      'Seal every stored secret under a new key: writes the new key beside the key file, re-seals, then replaces the file ' +
      '(with SECRETS_KEY from the environment, prints how to rotate it instead).',
    flags: {},
    async run({ store }) {
      try {
        return { ...(await sealingStore(store).rotateSecretsKey()) };
      } catch (err) {
        if (err instanceof SecretsKeyFromEnvironmentError) throw problems.unprocessable('secrets_key_from_environment', err.message);
        throw err;
      }
    },
  },
};
