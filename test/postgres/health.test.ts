/**
 * What README "Running several instances" tells a load balancer: `GET /healthz` is liveness (the
 * process answers), `GET /readyz` readiness (503 while the database cannot be used), and SIGTERM
 * shuts an instance down cleanly (exit 0, the pool closed).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { eventually, startService, tempDataDir, type ServiceProcess } from '../helpers/server.ts';
import { testDatabase, type TempDatabase } from '../helpers/engine.ts';

const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
});

async function instance(): Promise<{ service: ServiceProcess; database: TempDatabase }> {
  const database = await testDatabase();
  cleanups.push(() => database.drop());
  const dir = await tempDataDir('mos-health-');
  cleanups.push(dir.remove);
  const service = await startService({ dataDir: dir.dataDir, env: { DATABASE_URL: database.url, LOG_LEVEL: 'info' } });
  cleanups.push(async () => {
    if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill('SIGKILL');
  });
  return { service, database };
}

const status = async (service: ServiceProcess, path: string) => (await fetch(`${service.baseUrl}${path}`)).status;

describe('health checks and shutdown on PostgreSQL', () => {
  it('/readyz turns 503 when the database goes away, while /healthz stays 200', async () => {
    const { service, database } = await instance();
    expect(await status(service, '/readyz')).toBe(200);
    await database.drop(); // its connections are ended, and none can be made again
    await eventually(async () => (await status(service, '/readyz')) === 503, 10_000, 100);
    expect(await status(service, '/healthz')).toBe(200);
  });

  it('SIGTERM ends an instance cleanly: exit code 0 after the store is closed', async () => {
    const { service } = await instance();
    expect(await status(service, '/readyz')).toBe(200);
    const closed = service.waitForLog((line) => line.msg === 'store closed');
    expect(await service.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    expect(await closed).toMatchObject({ engine: 'postgres' });
  });
});
