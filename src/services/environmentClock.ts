/**
 * The clock of an environment. Live runs on real time, always; a test environment runs on real
 * time plus the offset its test clock was advanced by (see ./testClock.ts). Every time-driven
 * behaviour of an environment reads its time here.
 */
import type { AppContext } from '../context.ts';
import { isLivemode } from '../domain/accounts/environments.ts';
import type { SqlExecutor } from '../store/store.ts';
import { findClockOffset } from '../store/testClocks.ts';

/** The time of an environment now: real time for live, real time plus its offset for a test environment. */
export async function environmentNow(ctx: AppContext, db: SqlExecutor, environmentId: string): Promise<Date> {
  const now = ctx.clock.now();
  if (isLivemode(environmentId)) return now;
  const offsetMs = await findClockOffset(db, environmentId);
  return offsetMs === 0 ? now : new Date(now.getTime() + offsetMs);
}

