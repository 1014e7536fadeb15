/**
 * The real service on a damaged data directory, as an operator would meet it. Each case copies a
 * directory the service wrote (after a clean stop, or after a SIGKILL), damages it, and starts
 * the service: it either refuses to start with a message naming the file and what was expected,
 * or starts with exactly the acknowledged data. Nothing is ever served changed.
 *
 * Figures (kept in the report at the end of the run): cases tried, refused with a clear message,
 * recovered, silently changed (must be 0).
 */
import { spawn } from 'node:child_process';
import { cp, readdir, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAIN_ENTRY, PROJECT_ROOT, createAccountWithCli, startService, tempDataDir, type ServiceProcess } from '../helpers/server.ts';

const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
});

let root: string;
let apiKey: string;
/** The quotes (id → exact JSON) acknowledged before the clean stop. */
let cleanQuotes: Map<string, string>;
let cleanDir: string;
/** A directory whose service was SIGKILLed with writes in its journal, and the quotes it had acknowledged. */
let crashedDir: string;
let crashedQuotes: Map<string, string>;
/** The snapshot of the clean directory as it was at an earlier checkpoint. */
let olderSnapshot: Buffer;

const figures = { tried: 0, refused: 0, recovered: 0, silentlyChanged: 0 };
afterAll(() => {
  console.log(`data directory damage: ${figures.tried} cases tried, ${figures.refused} refused with a clear message, ${figures.recovered} recovered, ${figures.silentlyChanged} silently changed`);
});

async function start(dataDir: string): Promise<ServiceProcess> {
  const service = await startService({ dataDir });
  cleanups.push(async () => {
    if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill('SIGKILL');
  });
  return service;
}

async function createQuotes(baseUrl: string, count: number, from = 0): Promise<Map<string, string>> {
  const quotes = new Map<string, string>();
  for (let i = 0; i < count; i++) {
    const response = await fetch(`${baseUrl}/v1/quotes`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ amount: 300000 + from + i, term: 30 }),
    });
    expect(response.status).toBe(201);
    const text = await response.text();
    quotes.set((JSON.parse(text) as { quoteId: string }).quoteId, text);
  }
  return quotes;
}

/**
 * Starts `node src/main.ts` on `dataDir`: either it exits (a refusal) or it listens; then it is
 * stopped cleanly and started again under the helper (`logs` are the first start's log lines).
 */
async function tryStart(
  dataDir: string,
): Promise<{ refused: true; code: number | null; stderr: string } | { refused: false; service: ServiceProcess; logs: Array<Record<string, any>> }> {
  const child = spawn(process.execPath, [MAIN_ENTRY], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', RATE_LIMIT_PER_MINUTE: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let stdout = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const outcome = await new Promise<'exited' | 'listening'>((resolve) => {
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
      if (stdout.includes('"msg":"listening"')) resolve('listening');
    });
    child.once('exit', () => resolve('exited'));
  });
  if (outcome === 'listening') {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
    const logs = stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, any>);
    return { refused: false, service: await start(dataDir), logs };
  }
  if (child.exitCode === null) await new Promise((r) => child.once('exit', r));
  return { refused: true, code: child.exitCode, stderr: stderr + stdout };
}

async function readAll(baseUrl: string, ids: Iterable<string>): Promise<Map<string, string | number>> {
  const out = new Map<string, string | number>();
  for (const id of ids) {
    const response = await fetch(`${baseUrl}/v1/quotes/${id}`, { headers: { Authorization: `Bearer ${apiKey}` } });
    out.set(id, response.status === 200 ? await response.text() : response.status);
  }
  return out;
}

async function copyOf(source: string, name: string): Promise<string> {
  const target = path.join(root, name);
  await cp(source, target, { recursive: true, filter: (src) => path.basename(src) !== 'admin.sock' }); // a killed server leaves its socket
  return target;
}

/** A refusal must exit non-zero and name the file and say what is wrong. */
async function expectRefusal(dataDir: string, file: string, what: RegExp): Promise<string> {
  figures.tried++;
  const outcome = await tryStart(dataDir);
  if (!outcome.refused) {
    const served = await readAll(outcome.service.baseUrl, cleanQuotes.keys());
    const changed = [...cleanQuotes].some(([id, text]) => served.get(id) !== text);
    if (changed) figures.silentlyChanged++;
    await outcome.service.stop();
    throw new Error(`the service started on a damaged directory (${changed ? 'serving changed data' : 'data intact'})`);
  }
  expect(outcome.code).not.toBe(0);
  expect(outcome.stderr).toContain(path.join(dataDir, file));
  expect(outcome.stderr).toMatch(what);
  figures.refused++;
  return outcome.stderr;
}

async function expectRecovered(dataDir: string, expected: Map<string, string>): Promise<{ service: ServiceProcess; logs: Array<Record<string, any>> }> {
  figures.tried++;
  const outcome = await tryStart(dataDir);
  if (outcome.refused) throw new Error(`refused to start: ${outcome.stderr}`);
  const served = await readAll(outcome.service.baseUrl, expected.keys());
  const changed = [...expected].filter(([id, text]) => served.get(id) !== text);
  if (changed.length > 0) figures.silentlyChanged++;
  expect(changed.map(([id]) => `${id}: ${String(served.get(id)).slice(0, 80)}`)).toEqual([]);
  figures.recovered++;
  return outcome;
}

beforeAll(async () => {
  const dir = await tempDataDir('mos-damage-');
  cleanups.push(dir.remove);
  root = path.dirname(dir.dataDir);
  apiKey = (await createAccountWithCli(dir.dataDir, 'Damage Lending', 'ops@damage.test')).apiKey;
  // clean: quotes, a checkpoint at the restart, more quotes, a clean stop
  let service = await start(dir.dataDir);
  cleanQuotes = await createQuotes(service.baseUrl, 10);
  await service.stop();
  olderSnapshot = await readFile(path.join(dir.dataDir, 'snapshot.db'));
  service = await start(dir.dataDir);
  for (const [id, text] of await createQuotes(service.baseUrl, 10, 100)) cleanQuotes.set(id, text);
  await service.stop();
  cleanDir = await copyOf(dir.dataDir, 'clean');
  // crashed: more quotes, then SIGKILL: they are only in the journal
  service = await start(dir.dataDir);
  crashedQuotes = new Map([...cleanQuotes, ...(await createQuotes(service.baseUrl, 5, 200))]);
  service.child.kill('SIGKILL');
  await service.exited;
  crashedDir = await copyOf(dir.dataDir, 'crashed');
}, 120_000);

describe('a damaged snapshot is never served', () => {
  it('one changed byte (an appraisal fee of 650 made 950) refuses to start, naming the file and the expected checksum', async () => {
    const dir = await copyOf(cleanDir, 'fee');
    const file = path.join(dir, 'snapshot.db');
    const image = await readFile(file);
    const at = image.indexOf('"amountCents":65000');
    expect(at).toBeGreaterThan(0);
    image.write('"amountCents":95000', at, 'latin1');
    await writeFile(file, image);
    await expectRefusal(dir, 'snapshot.db', /does not match .*manifest\.json: expected lsn \d+, \d+ bytes, sha256 [0-9a-f]{64}/);
  });

  it('random damage to a page refuses to start', async () => {
    const dir = await copyOf(cleanDir, 'page');
    const file = path.join(dir, 'snapshot.db');
    const image = await readFile(file);
    for (let i = 0; i < 64; i++) image[4096 + ((i * 7919) % 4096)]! ^= 0x5a;
    await writeFile(file, image);
    await expectRefusal(dir, 'snapshot.db', /does not match/);
  });

  it('a deleted snapshot refuses to start instead of opening empty', async () => {
    const dir = await copyOf(cleanDir, 'deleted');
    await rm(path.join(dir, 'snapshot.db'));
    await expectRefusal(dir, 'snapshot.db', /is missing, but .*manifest\.json records a snapshot/);
  });

  it('a snapshot cut to 0 bytes refuses to start', async () => {
    const dir = await copyOf(cleanDir, 'empty');
    await truncate(path.join(dir, 'snapshot.db'), 0);
    await expectRefusal(dir, 'snapshot.db', /0 bytes \(an empty file\)/);
  });

  it('an older snapshot put back in place refuses to start', async () => {
    const dir = await copyOf(cleanDir, 'older');
    await writeFile(path.join(dir, 'snapshot.db'), olderSnapshot);
    await expectRefusal(dir, 'snapshot.db', /does not match/);
  });

  it('snapshot and manifest both deleted still refuses to start empty', async () => {
    const dir = await copyOf(cleanDir, 'both');
    await rm(path.join(dir, 'snapshot.db'));
    await rm(path.join(dir, 'manifest.json'));
    await expectRefusal(dir, '', /has held data .* neither manifest\.json nor snapshot\.db/);
  });

  it('a damaged manifest refuses to start', async () => {
    const dir = await copyOf(cleanDir, 'manifest');
    await writeFile(path.join(dir, 'manifest.json'), '{"format":1,"snapsh');
    await expectRefusal(dir, 'manifest.json', /is damaged/);
  });
});

describe('a damaged journal is never destroyed', () => {
  it('a SIGKILL with writes in the journal recovers every acknowledged quote', async () => {
    const dir = await copyOf(crashedDir, 'killed');
    const { service } = await expectRecovered(dir, crashedQuotes);
    await service.stop();
  });

  it('a flipped byte in the last (complete) record refuses to start and says where to cut', async () => {
    const dir = await copyOf(crashedDir, 'flip-last');
    const file = path.join(dir, 'journal.log');
    const journal = await readFile(file);
    expect(journal.length).toBeGreaterThan(0);
    journal[journal.length - 10]! ^= 0x01;
    await writeFile(file, journal);
    await expectRefusal(dir, 'journal.log', /last record .* fails its checksum.*truncate -s \d+/s);
    expect((await readFile(file)).equals(journal)).toBe(true); // nothing destroyed
  });

  it('a flipped byte in a record followed by good ones refuses to start', async () => {
    const dir = await copyOf(crashedDir, 'flip-middle');
    const file = path.join(dir, 'journal.log');
    const journal = await readFile(file);
    journal[8 + 20]! ^= 0x01; // inside the first record's payload
    await writeFile(file, journal);
    await expectRefusal(dir, 'journal.log', /damaged record at byte 0 is followed by a valid record/);
    expect((await readFile(file)).equals(journal)).toBe(true);
  });

  it('a last record cut short is set aside in journal.log.damaged-<time> and logged as an error; the rest recovers', async () => {
    const dir = await copyOf(crashedDir, 'cut');
    const file = path.join(dir, 'journal.log');
    const journal = await readFile(file);
    await truncate(file, journal.length - 3);
    // the last quote's record is the torn one: every other acknowledged quote must be there
    const lastId = [...crashedQuotes.keys()].at(-1)!;
    const expected = new Map([...crashedQuotes].filter(([id]) => id !== lastId));
    const { service, logs } = await expectRecovered(dir, expected);
    const logged = logs.find((l) => l.level === 50 && String(l.msg).startsWith('torn journal tail set aside'))!;
    expect(logged).toBeDefined();
    const keptIn = String(logged.keptIn);
    expect(path.basename(keptIn)).toMatch(/^journal\.log\.damaged-/);
    const kept = await readFile(keptIn);
    expect(logged.bytes).toBe(kept.length);
    // the kept bytes are the torn record, exactly as they were
    expect(journal.subarray(journal.length - 3 - kept.length, journal.length - 3).equals(kept)).toBe(true);
    expect((await stat(keptIn)).mode & 0o777).toBe(0o600);
    await service.stop();
  });

  it('a journal deleted after a crash refuses to start (its writes would be lost)', async () => {
    const dir = await copyOf(crashedDir, 'no-journal');
    await rm(path.join(dir, 'journal.log'));
    await expectRefusal(dir, 'journal.log', /is missing, and .*manifest\.json says the service did not stop cleanly/);
  });

  it('a journal deleted after a clean stop loses nothing: the service starts with every quote', async () => {
    const dir = await copyOf(cleanDir, 'clean-no-journal');
    await rm(path.join(dir, 'journal.log'));
    const { service } = await expectRecovered(dir, cleanQuotes);
    await service.stop();
    expect((await readdir(dir)).filter((f) => f.startsWith('journal.log.damaged'))).toEqual([]);
  });
});
