/**
 * Reads from a streaming replica (DATABASE_REPLICA_URLS) on a private primary and replica
 * (scripts/lib/pgReplica.ts): the operations marked `x-read-replica: true` read from the replica,
 * except for a caller whose own write it has not replayed yet; a replica lagging beyond
 * DATABASE_REPLICA_MAX_LAG_MS, stopped or promoted is not used, and no request fails for it; a
 * replica URL that is the primary, or unreachable, refuses the start with a clear message.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPrivateReplication, type PrivateReplication } from '../../scripts/lib/pgReplica.ts';
import { freePort } from '../../scripts/lib/spawnService.ts';
import { decodeSecretsKey, SecretKeyring } from '../../src/store/core/sealing.ts';
import { openPgStore, type PgStore } from '../../src/store/postgres/pgStore.ts';
import { eventually } from '../helpers/server.ts';
import { apiClient, startTestApp, type TestAccount, type TestApp } from '../helpers/testApp.ts';
import { signUpWith } from '../dashboard/httpClient.ts';

const SECRETS_KEY = 'BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=';
const sealer = new SecretKeyring(decodeSecretsKey(SECRETS_KEY, 'SECRETS_KEY'));
const APPLICATION = {
  applicant: { name: 'Jane Doe', amount: 350000, email: 'jane.doe@example.test', annualIncome: 120000, monthlyDebts: 650, creditScore: 720 },
  term: 30,
  propertyValue: 450000,
};
let cluster: PrivateReplication;

beforeAll(async () => {
  cluster = await startPrivateReplication();
  await cluster.createDatabase('mos');
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
});

type Replicas = NonNullable<ReturnType<PgStore['stats']>['replicas']>;
const replicasOf = (app: TestApp): Replicas => (app.ctx.store as unknown as PgStore).stats().replicas!;

async function listNames(account: TestAccount, client: 'client' | 'member'): Promise<string[]> {
  const { data, response } = await account[client].GET('/v1/applications', { params: { query: {} } });
  expect(response.status).toBe(200);
  return data!.data.map((application) => application.applicant.name);
}

describe('an instance with one replica', () => {
  let app: TestApp;
  let account: TestAccount;

  beforeAll(async () => {
    app = await startTestApp({
      databaseUrl: cluster.primaryUrl('mos'),
      env: { SECRETS_KEY, DATABASE_REPLICA_URLS: cluster.replicaUrl('mos'), DATABASE_READ_YOUR_WRITES_MS: '600000', DATABASE_REPLICA_MAX_LAG_MS: '600000', METRICS_PORT: '0' },
    });
    account = await app.newAccount('Replica Lending');
    await cluster.caughtUp();
    await eventually(() => replicasOf(app).replicas[0]!.usable);
  }, 60_000);
  afterAll(async () => {
    await app?.close();
  });

  it('a write then an immediate list by the same key sees the write; another key reads the replica, stale while its replay is paused', async () => {
    await cluster.onReplica('SELECT pg_wal_replay_pause()');
    try {
      const created = await account.client.POST('/v1/applications', { body: { ...APPLICATION, applicant: { ...APPLICATION.applicant, name: 'Written Then Read' } } });
      expect(created.response.status).toBe(201);
      expect(await listNames(account, 'client')).toContain('Written Then Read');
      expect(await listNames(account, 'member')).not.toContain('Written Then Read');
      const { replicas, readYourWrites } = replicasOf(app);
      expect(replicas[0]!.reads).toBeGreaterThan(0);
      expect(readYourWrites).toBeGreaterThan(0);
    } finally {
      await cluster.onReplica('SELECT pg_wal_replay_resume()');
    }
    await eventually(async () => (await listNames(account, 'member')).includes('Written Then Read'), 10_000);
  });

  it("the dashboard's tables read the replica too, and a user's own form sends their next page to the primary", async () => {
    const { client: user, firstKey } = await signUpWith(app.baseUrl, { name: 'Dashboard Replica Lending', email: 'ana@replica.test', password: 'correct horse battery staple' });
    const api = apiClient(app.baseUrl, firstKey);
    await cluster.caughtUp();
    await cluster.onReplica('SELECT pg_wal_replay_pause()');
    try {
      expect((await api.POST('/v1/applications', { body: { ...APPLICATION, applicant: { ...APPLICATION.applicant, name: 'Seen After My Form' } } })).response.status).toBe(201);
      const replicaReads = replicasOf(app).replicas[0]!.reads;
      const stale = await user.get('/dashboard/applications');
      expect(stale.status).toBe(200);
      expect(stale.body).not.toContain('Seen After My Form');
      expect(replicasOf(app).replicas[0]!.reads).toBeGreaterThan(replicaReads);
      // Any form of the user's counts as their write: here the live/test switch, to the data shown already.
      const shown = stale.body.includes('>Test data<') ? 'test' : 'live';
      const switched = await user.submit('/dashboard/applications', '/dashboard/environment', { environment: shown, return: '/dashboard/applications' });
      expect(switched.status).toBe(303);
      expect((await user.get('/dashboard/applications')).body).toContain('Seen After My Form');
    } finally {
      await cluster.onReplica('SELECT pg_wal_replay_resume()');
    }
  });

  it('metrics count the reads by target and show the replica\'s lag and use', async () => {
    const text = await (await fetch(app.metricsUrl!)).text();
    expect(text).toMatch(/^mos_store_replica_reads_total\{target="replica1"\} [1-9]\d*$/m);
    expect(text).toMatch(/^mos_store_replica_reads_total\{target="primary_read_your_writes"\} [1-9]\d*$/m);
    expect(text).toMatch(/^mos_store_replica_reads_total\{target="primary_fallback"\} \d+$/m);
    expect(text).toMatch(/^mos_store_replica_lag_seconds\{replica="replica1"\} [\d.e-]+$/m);
    expect(text).toMatch(/^mos_store_replica_usable\{replica="replica1"\} 1$/m);
  });

  it('a replica stopped while reads run drops out with no failed request, and is used again once it is back', async () => {
    const statuses: number[] = [];
    let stopped = false;
    let afterStop = 0;
    // Each reader runs until the replica is stopped and 10 more reads of its own have answered.
    const reader = async () => {
      for (let mine = 0; !stopped || mine < 10; ) {
        statuses.push((await account.member.GET('/v1/applications', { params: { query: {} } })).response.status);
        if (stopped) {
          mine++;
          afterStop++;
        }
      }
    };
    const readers = Promise.all([reader(), reader(), reader()]);
    await eventually(() => statuses.length >= 10);
    await cluster.stopReplica();
    stopped = true;
    await readers;
    expect(afterStop).toBeGreaterThanOrEqual(30);
    expect(statuses.every((status) => status === 200)).toBe(true);
    await eventually(() => !replicasOf(app).replicas[0]!.usable, 10_000);
    expect(replicasOf(app).fallbacks).toBeGreaterThan(0);

    await cluster.startReplica();
    await eventually(() => replicasOf(app).replicas[0]!.usable, 20_000);
    const reads = replicasOf(app).replicas[0]!.reads;
    expect(await listNames(account, 'member')).toContain('Written Then Read');
    expect(replicasOf(app).replicas[0]!.reads).toBe(reads + 1);
  }, 60_000);
});

describe('the lag bound', () => {
  it('a replica whose replay lags beyond DATABASE_REPLICA_MAX_LAG_MS is not used: another key then reads the write from the primary', async () => {
    const app = await startTestApp({
      databaseUrl: cluster.primaryUrl('mos'),
      env: { SECRETS_KEY, DATABASE_REPLICA_URLS: cluster.replicaUrl('mos'), DATABASE_READ_YOUR_WRITES_MS: '0', DATABASE_REPLICA_MAX_LAG_MS: '300' },
    });
    try {
      const account = await app.newAccount('Lagging Lending');
      await cluster.caughtUp();
      await eventually(() => replicasOf(app).replicas[0]!.usable, 10_000);
      await cluster.onReplica('SELECT pg_wal_replay_pause()');
      try {
        const created = await account.client.POST('/v1/applications', { body: { ...APPLICATION, applicant: { ...APPLICATION.applicant, name: 'Beyond The Bound' } } });
        expect(created.response.status).toBe(201);
        await eventually(() => !replicasOf(app).replicas[0]!.usable, 10_000);
        expect(await listNames(account, 'member')).toContain('Beyond The Bound');
      } finally {
        await cluster.onReplica('SELECT pg_wal_replay_resume()');
      }
    } finally {
      await app.close();
    }
  }, 60_000);
});

describe('bad replica configuration refuses the start, naming the replica', () => {
  it('a replica URL that points to the primary', async () => {
    await expect(openPgStore({ url: cluster.primaryUrl('mos'), replicas: { urls: [cluster.primaryUrl('mos')], readYourWritesMs: 2000, maxLagMs: 5000 }, sealer })).rejects.toThrow(
      /DATABASE_REPLICA_URLS: replica1 \(postgres:\/\/postgres@127\.0\.0\.1:\d+\/mos\) is not a replica: it is not in recovery/,
    );
  });

  it('an unreachable replica', async () => {
    const closed = await freePort();
    await expect(
      openPgStore({ url: cluster.primaryUrl('mos'), replicas: { urls: [`postgres://postgres@127.0.0.1:${closed}/mos`], readYourWritesMs: 2000, maxLagMs: 5000 }, sealer }),
    ).rejects.toThrow(/DATABASE_REPLICA_URLS: replica1 \(postgres:\/\/postgres@127\.0\.0\.1:\d+\/mos\) cannot be reached/);
  });
});

describe('a promoted replica', () => {
  it('is no longer used once it leaves recovery, and reads keep answering from the primary', async () => {
    const app = await startTestApp({ databaseUrl: cluster.primaryUrl('mos'), env: { SECRETS_KEY, DATABASE_REPLICA_URLS: cluster.replicaUrl('mos') } });
    try {
      const account = await app.newAccount('Promoted Lending');
      await eventually(() => replicasOf(app).replicas[0]!.usable, 10_000);
      await cluster.promoteReplica();
      await eventually(() => !replicasOf(app).replicas[0]!.usable, 10_000);
      const created = await account.client.POST('/v1/applications', { body: { ...APPLICATION, applicant: { ...APPLICATION.applicant, name: 'After Promotion' } } });
      expect(created.response.status).toBe(201);
      expect(await listNames(account, 'member')).toContain('After Promotion');
    } finally {
      await app.close();
    }
  }, 60_000);
});
