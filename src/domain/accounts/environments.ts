/**
 * Live and test: the two environments of every account.
 *
 * Everything an account owns is stored under the id of one of its environments: the live
 * environment's id is the account's own id (`acc-…`, the id the API shows), the test
 * environment's id is that id with `.test` appended. Every repository already scopes its reads
 * and writes by that owner id, so test and live data cannot meet: a test key's look-up of a live
 * id finds nothing, exactly as for another account's id. Deriving one id from the other keeps the
 * mode of any record a pure function of its owner, with no join and nothing to get out of step.
 */

const TEST_SUFFIX = '.test';

/** The id records of the account's test environment are stored under. */
export function testEnvironmentId(accountId: string): string {
  return `${liveAccountId(accountId)}${TEST_SUFFIX}`;
}

/** True for the account's live environment, false for its test environment. */
export function isLivemode(environmentId: string): boolean {
  return !environmentId.endsWith(TEST_SUFFIX);
}

/** The account an environment belongs to (its live id, the one the API shows). */
export function liveAccountId(environmentId: string): string {
  return isLivemode(environmentId) ? environmentId : environmentId.slice(0, -TEST_SUFFIX.length);
}

/** The environment of an account for a mode. */
export function environmentId(accountId: string, livemode: boolean): string {
  return livemode ? liveAccountId(accountId) : testEnvironmentId(accountId);
}
