/**
 * The key that seals secrets at rest (webhook signing secrets, bank partner credentials): its
 * status and its rotation. The store engine owns the key and the sealed values; these use cases are
 * what the operator's commands call.
 */
import type { AppContext } from '../context.ts';
import { fail } from '../errors.ts';
import { SecretsKeyFromEnvironmentError } from '../store/core/errors.ts';
import type { SqlJsStoreExtra } from '../store/sqljs/sqljsStore.ts';
import type { Store } from '../store/store.ts';

function sealingStore(store: Store): SqlJsStoreExtra {
  const extra = store as Store & Partial<SqlJsStoreExtra>;
  if (typeof extra.rotateSecretsKey !== 'function' || typeof extra.secretsStatus !== 'function') {
    throw fail.refused('secrets_key_unmanaged', 'this store engine does not manage a secrets key');
  }
  return extra as SqlJsStoreExtra;
}

export async function secretsKeyStatus(ctx: AppContext): Promise<Record<string, unknown>> {
  return { ...(await sealingStore(ctx.store).secretsStatus()) };
}

export async function rotateSecretsKey(ctx: AppContext): Promise<Record<string, unknown>> {
  try {
    return { ...(await sealingStore(ctx.store).rotateSecretsKey()) };
  } catch (err) {
    if (err instanceof SecretsKeyFromEnvironmentError) throw fail.refused('secrets_key_from_environment', err.message);
    throw err;
  }
}
