import { open as openFile, readFile, stat, truncate, appendFile, writeFile, rm, access } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { StorageUnavailableError, StoreCorruptionError, StoreUnavailableError, isUniqueViolation } from '../../../../src/store/core/errors.ts';
import { checkpointThreshold } from '../../../../src/store/sqljs/checkpoints.ts';
import type { SqlJsStore } from '../../../../src/store/sqljs/sqljsStore.ts';
import { crashImage, eventually, migrationsDir, open, tempDirs } from './storeTestUtils.ts';
import type { TempDirs } from './storeTestUtils.ts';

let dirs: TempDirs;
let noMigrations: string;
beforeAll(async () => {
  dirs = await tempDirs();
  noMigrations = await migrationsDir(dirs);
});
afterAll(() => dirs.cleanup());

const SCHEMA = 'CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, data BLOB)';

async function fresh(name: string, extra = {}): Promise<{ dir: string; store: SqlJsStore }> {
  const dir = await dirs.make(name);
  const store = await open(dir, noMigrations, extra);
  await store.transaction((tx) => tx.run(SCHEMA));
  return { dir, store };
}

async function insert(store: SqlJsStore, name: string, data: Uint8Array | null = null): Promise<void> {
  await store.transaction((tx) => tx.run('INSERT INTO items (name, data) VALUES (?, ?)', [name, data]));
}

async function names(store: SqlJsStore): Promise<string[]> {
  return store.read(async (db) => (await db.all<{ name: string }>('SELECT name FROM items ORDER BY id')).map((r) => r.name));
}

describe('sql.js store durability', () => {
  it('commits survive close and reopen', async () => {
    const { dir, store } = await fresh('reopen');
    await insert(store, 'a');
    await insert(store, 'b');
    await store.close();
    expect(store.isOpen()).toBe(false);
    const again = await open(dir, noMigrations);
    expect(await names(again)).toEqual(['a', 'b']);
    await again.close();
  });

  it('commits survive a crash (journal replay, no closing checkpoint)', async () => {
    const { dir, store } = await fresh('crash-replay');
    await insert(store, 'a');
    await insert(store, 'b');
    expect(store.stats().journalBytes).toBeGreaterThan(0);
    const image = await crashImage(dir, dir + '-img');
    await store.close();
    const again = await open(image, noMigrations);
    expect(await names(again)).toEqual(['a', 'b']);
    expect(again.stats()).toMatchObject({ lsn: 3, journalBytes: 0 }); // replay is followed by a checkpoint
    await again.close();
  });

  it('a transaction whose fn throws writes nothing and rethrows the same error', async () => {
    const { dir, store } = await fresh('rollback');
    await insert(store, 'kept');
    const before = store.stats();
    const boom = new Error('boom');
    await expect(
      store.transaction(async (tx) => {
        await tx.run("INSERT INTO items (name) VALUES ('ghost')");
        throw boom;
      }),
    ).rejects.toBe(boom);
    expect(store.stats()).toEqual(before);
    expect(await names(store)).toEqual(['kept']);
    const image = await crashImage(dir, dir + '-img');
    await store.close();
    for (const d of [image, dir]) {
      const again = await open(d, noMigrations);
      expect(await names(again)).toEqual(['kept']);
      await again.close();
    }
  });

  it('constraint errors propagate with the SQLite message and the transaction continues or rolls back', async () => {
    const { store } = await fresh('unique');
    await insert(store, 'dup');
    const err = await insert(store, 'dup').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/UNIQUE constraint failed: items.name/);
    expect(isUniqueViolation(err)).toBe(true);
    // a caught statement error inside a transaction does not poison the rest of it
    await store.transaction(async (tx) => {
      await expect(tx.run("INSERT INTO items (name) VALUES ('dup')")).rejects.toThrow(/UNIQUE/);
      await tx.run("INSERT INTO items (name) VALUES ('after')");
    });
    expect(await names(store)).toEqual(['dup', 'after']);
    await store.close();
  });

  it('a commit that fails (deferred foreign key) rolls back and journals nothing', async () => {
    const { dir, store } = await fresh('deferred-fk');
    await store.transaction(async (tx) => {
      await tx.run('CREATE TABLE parent (id INTEGER PRIMARY KEY)');
      await tx.run('CREATE TABLE child (id INTEGER PRIMARY KEY, parent_id INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED)');
    });
    const before = store.stats();
    await expect(store.transaction((tx) => tx.run('INSERT INTO child (parent_id) VALUES (7)'))).rejects.toThrow(/FOREIGN KEY constraint failed/);
    expect(store.stats()).toEqual(before);
    await expect(store.transaction((tx) => tx.run('COMMIT'))).rejects.toThrow(/not allowed/);
    await store.transaction(async (tx) => {
      await tx.run('INSERT INTO child (parent_id) VALUES (7)');
      await tx.run('INSERT INTO parent (id) VALUES (7)'); // satisfied by commit time
    });
    const image = await crashImage(dir, dir + '-img');
    await store.close();
    const again = await open(image, noMigrations);
    expect(await again.read((db) => db.all('SELECT parent_id FROM child'))).toEqual([{ parent_id: 7 }]);
    await again.close();
  });

  it('run/get/all map rows to plain objects and report changes', async () => {
    const { store } = await fresh('api');
    const result = await store.transaction(async (tx) => {
      await tx.run("INSERT INTO items (name) VALUES ('x'), ('y'), ('z')");
      const changed = await tx.run("UPDATE items SET data = x'00' WHERE name <> 'x'");
      const returned = await tx.get<{ id: number; name: string }>("INSERT INTO items (name) VALUES ('w') RETURNING id, name");
      const none = await tx.get('SELECT * FROM items WHERE name = ?', ['nope']);
      return { changed, returned, none };
    });
    expect(result).toEqual({ changed: { changes: 2 }, returned: { id: 4, name: 'w' }, none: undefined });
    const rows = await store.read((db) => db.all('SELECT id, name FROM items WHERE id <= ? ORDER BY id', [2]));
    expect(rows).toEqual([{ id: 1, name: 'x' }, { id: 2, name: 'y' }]);
    await store.close();
  });

  it.each([
    ['through the raw reader', 'values-raw', {}],
    ['through sql.js Statement.get() (the fallback when sql.js offers no raw reads)', 'values-fallback', { rawStatements: false }],
  ])('values() gives each row as an array of its values in the SELECT order, in reads and transactions, %s', async (_how, dirName, options) => {
    const { store } = await fresh(dirName, options);
    const inTx = await store.transaction(async (tx) => {
      await tx.run("INSERT INTO items (name, data) VALUES ('x', NULL), ('y', x'01')");
      return tx.values('SELECT name, id, data FROM items ORDER BY id');
    });
    expect(inTx).toEqual([['x', 1, null], ['y', 2, new Uint8Array([1])]]);
    expect(await store.read((db) => db.values('SELECT id, name FROM items WHERE id > ? ORDER BY id', [1]))).toEqual([[2, 'y']]);
    expect(await store.read((db) => db.values('SELECT id FROM items WHERE id > 5'))).toEqual([]);
    await store.close();
  });

  it('a torn last record (truncated) is ignored and earlier records survive', async () => {
    const { dir, store } = await fresh('torn-truncate');
    await insert(store, 'a');
    await insert(store, 'b');
    const image = await crashImage(dir, dir + '-img');
    await store.close();
    const journal = join(image, 'journal.log');
    const size = (await stat(journal)).size;
    await truncate(journal, size - 3);
    const again = await open(image, noMigrations);
    expect(await names(again)).toEqual(['a']);
    expect(again.stats().lsn).toBe(2);
    await insert(again, 'c'); // the journal continues cleanly after the cut
    await again.close();
    const third = await open(image, noMigrations);
    expect(await names(third)).toEqual(['a', 'c']);
    await third.close();
  });

  it('a journal holding no whole record, only a torn tail shorter than a record header: reopened, written to, and reopened after a crash, it opens with every row', async () => {
    const { dir, store } = await fresh('torn-header-only');
    await insert(store, 'a');
    await store.checkpoint(); // 'a' is in the snapshot; the journal is empty
    const image = await crashImage(dir, dir + '-img');
    await insert(store, 'b');
    const frame = await readFile(join(dir, 'journal.log')); // the record of 'b', whole
    await store.close();
    for (let cut = 1; cut < 8; cut++) {
      // A crash cut the write of 'b' after `cut` bytes: not even its 8-byte header is whole.
      const torn = await crashImage(image, `${image}-cut-${cut}`);
      await writeFile(join(torn, 'journal.log'), frame.subarray(0, cut));
      const reopened = await open(torn, noMigrations);
      expect(await names(reopened), `cut ${cut}`).toEqual(['a']);
      await insert(reopened, 'c');
      await insert(reopened, 'd');
      const afterCrash = await crashImage(torn, `${torn}-crash`);
      await reopened.close();
      const third = await open(afterCrash, noMigrations);
      expect(await names(third), `cut ${cut}`).toEqual(['a', 'c', 'd']);
      await third.close();
    }
  });

  it('garbage appended after the last record is ignored', async () => {
    const { dir, store } = await fresh('torn-garbage');
    await insert(store, 'a');
    const image = await crashImage(dir, dir + '-img');
    await store.close();
    const journal = join(image, 'journal.log');
    const good = (await stat(journal)).size;
    await appendFile(journal, Buffer.from([0, 0, 0, 40, 1, 2, 3, 4, 0x7b, 0x22, 9, 9])); // a header promising more than is there
    await appendFile(journal, Buffer.alloc(4096)); // and a zero-filled tail
    const again = await open(image, noMigrations);
    expect(await names(again)).toEqual(['a']);
    await again.close();
    // the torn tail was cut at open, then the journal was checkpointed away
    expect((await stat(journal)).size).toBeLessThanOrEqual(good);
  });

  it('a damaged record followed by good ones refuses to open', async () => {
    const { dir, store } = await fresh('corrupt-middle');
    await insert(store, 'a');
    await insert(store, 'b');
    await insert(store, 'c');
    const image = await crashImage(dir, dir + '-img');
    await store.close();
    const journal = join(image, 'journal.log');
    const buf = await readFile(journal);
    const firstLen = buf.readUInt32BE(0);
    const at = 8 + firstLen + 8 + 12;
    buf.writeUInt8(buf.readUInt8(at) ^ 0xff, at); // flip a byte inside the second record's payload
    await writeFile(journal, buf);
    const err = await open(image, noMigrations).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreCorruptionError);
    expect((err as Error).message).toMatch(/damaged record at byte \d+ is followed by a valid record/);
    // the failed open released the lock and did not checkpoint over the evidence
    await expect(access(join(image, 'LOCK'))).rejects.toThrow();
    expect((await readFile(journal)).equals(buf)).toBe(true);
  });

  it('checkpoint writes a snapshot, empties the journal, and reopens', async () => {
    const { dir, store } = await fresh('checkpoint');
    await insert(store, 'a');
    await store.checkpoint();
    expect(store.stats()).toMatchObject({ journalBytes: 0, checkpoints: 1 });
    expect((await stat(join(dir, 'snapshot.db'))).size).toBeGreaterThan(0);
    await insert(store, 'b'); // the store keeps working after export()
    const image = await crashImage(dir, dir + '-img');
    await store.close();
    const again = await open(image, noMigrations);
    expect(await names(again)).toEqual(['a', 'b']);
    // foreign keys are enforced after checkpoint/export
    await again.transaction(async (tx) => {
      await tx.run('CREATE TABLE parent (id INTEGER PRIMARY KEY)');
      await tx.run('CREATE TABLE child (id INTEGER PRIMARY KEY, parent_id INTEGER REFERENCES parent(id))');
    });
    await again.checkpoint();
    await expect(again.transaction((tx) => tx.run('INSERT INTO child (parent_id) VALUES (42)'))).rejects.toThrow(/FOREIGN KEY/);
    await again.close();
  });

  it('a crash between snapshot rename and journal truncate does not double-apply', async () => {
    const { dir, store } = await fresh('rename-truncate');
    await insert(store, 'a');
    await insert(store, 'b');
    const oldJournal = await readFile(join(dir, 'journal.log'));
    expect(oldJournal.length).toBeGreaterThan(0);
    await store.checkpoint();
    await store.close();
    await writeFile(join(dir, 'journal.log'), oldJournal); // the journal as it was before the truncate
    const again = await open(dir, noMigrations); // re-applying would hit UNIQUE(name) and refuse to open
    expect(await names(again)).toEqual(['a', 'b']);
    expect(again.stats().lsn).toBe(3);
    await insert(again, 'c');
    const image = await crashImage(dir, dir + '-img');
    await again.close();
    const third = await open(image, noMigrations);
    expect(await names(third)).toEqual(['a', 'b', 'c']);
    expect(third.stats().lsn).toBe(4);
    await third.close();
  });

  it('refuses a journal that does not continue the snapshot (missing records)', async () => {
    const { dir, store } = await fresh('gap');
    await insert(store, 'a');
    await store.checkpoint();
    await insert(store, 'b');
    const image = await crashImage(dir, dir + '-img');
    await store.close();
    // A directory from before manifests (so no manifest says a snapshot must exist): the journal
    // starts at lsn 3 but there is nothing before it.
    await rm(join(image, 'snapshot.db'));
    await rm(join(image, 'manifest.json'));
    await rm(join(image, 'secrets.key'));
    await expect(open(image, noMigrations)).rejects.toThrow(/does not follow lsn 0/);
  });

  it('refuses to start when the snapshot the manifest records is missing (never opens empty)', async () => {
    const { dir, store } = await fresh('gap-manifest');
    await insert(store, 'a');
    await store.checkpoint();
    await insert(store, 'b');
    const image = await crashImage(dir, dir + '-img');
    await store.close();
    await rm(join(image, 'snapshot.db'));
    await expect(open(image, noMigrations)).rejects.toThrow(/snapshot\.db is missing, but .*manifest\.json records a snapshot \(lsn 2,/);
  });

  it('Uint8Array and other parameter types round-trip through journal replay', async () => {
    const { dir, store } = await fresh('blobs');
    const all = new Uint8Array(256).map((_, i) => i);
    const backing = new Uint8Array([9, 9, 1, 2, 3, 9]);
    const values: [string, Uint8Array][] = [
      ['all-bytes', all],
      ['empty', new Uint8Array(0)],
      ['buffer', Buffer.from('héllo\u0000wörld', 'utf8')],
      ['view', backing.subarray(2, 5)],
    ];
    for (const [name, data] of values) await insert(store, name, data);
    await store.transaction(async (tx) => {
      await tx.run('CREATE TABLE scalars (k TEXT PRIMARY KEY, v)');
      const scalars: [string, string | number | null][] = [
        ['big', 2 ** 53 - 1],
        ['neg', -123456789012],
        ['float', 0.1 + 0.2],
        ['inf', Number.POSITIVE_INFINITY],
        ['null', null],
        ['text', 'emoji 🏠 "quotes" \\ and {"b":"x"}'],
      ];
      for (const [k, v] of scalars) await tx.run('INSERT INTO scalars (k, v) VALUES (?, ?)', [k, v]);
    });
    const snapshotOf = (s: SqlJsStore) =>
      s.read(async (db) => ({
        items: await db.all('SELECT name, data, typeof(data) AS t FROM items ORDER BY id'),
        scalars: await db.all('SELECT k, v, typeof(v) AS t FROM scalars ORDER BY k'),
      }));
    const expected = await snapshotOf(store);
    expect(expected.items.map((r) => r.data)).toEqual(values.map(([, d]) => new Uint8Array(d)));
    const image = await crashImage(dir, dir + '-img');
    await store.close();
    const again = await open(image, noMigrations);
    expect(again.stats().lsn).toBe(6); // replayed, not read from a snapshot
    expect(await snapshotOf(again)).toEqual(expected);
    await again.close();
  });

  it('refuses parameters replay could not reproduce', async () => {
    const { store } = await fresh('bad-params');
    const before = store.stats();
    await expect(
      store.transaction((tx) => tx.run('INSERT INTO items (name) VALUES (?)', [undefined as unknown as string])),
    ).rejects.toThrow(TypeError);
    await expect(
      store.transaction((tx) => tx.run('INSERT INTO items (name) VALUES (?)', [new Date() as unknown as string])),
    ).rejects.toThrow(/unsupported type object/);
    expect(store.stats()).toEqual(before);
    await store.close();
  });

  it('serialises 200 concurrent transactions; all are present after a crash', async () => {
    const { dir, store } = await fresh('concurrent');
    await store.transaction((tx) => tx.run('CREATE TABLE counter (n INTEGER NOT NULL)'));
    await store.transaction((tx) => tx.run('INSERT INTO counter (n) VALUES (0)'));
    const fsyncsBefore = store.stats().fsyncs;
    await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        store.transaction(async (tx) => {
          const row = await tx.get<{ n: number }>('SELECT n FROM counter');
          await new Promise((r) => setImmediate(r)); // yield: another transaction must not slip in here
          await tx.run('UPDATE counter SET n = ?', [row!.n + 1]);
          await tx.run('INSERT INTO items (name) VALUES (?)', [`item-${i}`]);
        }),
      ),
    );
    const fsyncs = store.stats().fsyncs - fsyncsBefore;
    expect(fsyncs).toBeGreaterThan(0);
    expect(fsyncs).toBeLessThanOrEqual(200);
    const image = await crashImage(dir, dir + '-img');
    await store.close();
    const again = await open(image, noMigrations);
    const { n, count } = await again.read(async (db) => ({
      n: (await db.get<{ n: number }>('SELECT n FROM counter'))!.n,
      count: (await db.get<{ c: number }>('SELECT count(*) AS c FROM items'))!.c,
    }));
    expect({ n, count }).toEqual({ n: 200, count: 200 });
    await again.close();
  });

  it('group commit: 200 concurrent commits share a handful of fsyncs', async () => {
    const { store } = await fresh('group-commit');
    const before = store.stats();
    await Promise.all(Array.from({ length: 200 }, (_, i) => insert(store, `g-${i}`)));
    const after = store.stats();
    expect(after.lsn - before.lsn).toBe(200);
    expect(after.durableLsn).toBe(after.lsn);
    expect(after.fsyncs - before.fsyncs).toBeLessThanOrEqual(10);
    await store.close();
  });

  it('read() waits for an in-progress transaction instead of seeing its uncommitted writes', async () => {
    const { store } = await fresh('read-isolation');
    await insert(store, 'before');
    const events: string[] = [];
    let release!: () => void;
    const midway = new Promise<void>((r) => (release = r));
    const tx = store.transaction(async (t) => {
      await t.run("INSERT INTO items (name) VALUES ('uncommitted')");
      release();
      await new Promise((r) => setTimeout(r, 30));
      events.push('tx-body-done');
      throw new Error('abort');
    });
    await midway; // the transaction has written but not committed
    const seen = store.read(async (db) => {
      events.push('read-runs');
      return db.all('SELECT name FROM items');
    });
    await expect(tx).rejects.toThrow('abort');
    expect(await seen).toEqual([{ name: 'before' }]);
    expect(events).toEqual(['tx-body-done', 'read-runs']);

    // and a read queued behind a committing transaction sees the commit only once it is durable
    let release2!: () => void;
    const midway2 = new Promise<void>((r) => (release2 = r));
    const tx2 = store.transaction(async (t) => {
      await t.run("INSERT INTO items (name) VALUES ('committed')");
      release2();
      await new Promise((r) => setTimeout(r, 30));
    });
    await midway2;
    const seen2 = store.read((db) => db.all('SELECT name FROM items ORDER BY id'));
    const order: string[] = [];
    await Promise.all([tx2.then(() => order.push('tx')), seen2.then(() => order.push('read'))]);
    expect(await seen2).toEqual([{ name: 'before' }, { name: 'committed' }]);
    expect(order).toEqual(['tx', 'read']);
    await store.close();
  });

  it('read() cannot write', async () => {
    const { store } = await fresh('read-only');
    await expect(store.read((db) => db.run("INSERT INTO items (name) VALUES ('x')"))).rejects.toThrow(/not allowed inside read/);
    // a write smuggled through get() is refused too
    await expect(store.read((db) => db.get("INSERT INTO items (name) VALUES ('smuggled') RETURNING id"))).rejects.toThrow(/only SELECT/);
    await expect(store.read((db) => db.values("INSERT INTO items (name) VALUES ('smuggled') RETURNING id"))).rejects.toThrow(/only SELECT/);
    expect(await names(store)).toEqual([]);
    await store.close();
  });

  it('nested use of the store inside a transaction fails fast instead of deadlocking', async () => {
    const { store } = await fresh('nested');
    await expect(store.transaction(async () => store.read(async () => 1))).rejects.toThrow(/would deadlock/);
    await expect(store.transaction(async () => store.transaction(async () => 1))).rejects.toThrow(/would deadlock/);
    // work started from inside a transaction but run after it finished is fine
    let later: Promise<number> | undefined;
    await store.transaction(async () => {
      later = new Promise((r) => setTimeout(r, 5)).then(() => store.read(async () => 7));
    });
    expect(await later).toBe(7);
    await store.close();
  });

  it('checkpoints in the background when the journal passes checkpointBytes', async () => {
    const { dir, store } = await fresh('auto-checkpoint', { checkpointBytes: 2048, checkpointJournalShare: 0 });
    for (let i = 0; i < 60; i++) await insert(store, `row-${i}-${'x'.repeat(50)}`);
    // A background checkpoint writes its snapshot outside the queue: wait for the last one to end.
    await eventually(() => store.stats().checkpoints > 0 && store.stats().journalBytes < 2048);
    const image = await crashImage(dir, dir + '-img');
    await store.close();
    const again = await open(image, noMigrations);
    expect((await names(again)).length).toBe(60);
    await again.close();
  });

  it('the journal may grow to a share of the last snapshot before a background checkpoint, so a large database is not copied every checkpointBytes', async () => {
    // A quarter of the snapshot: with a floor of 2 KiB, a snapshot of 64 KiB or more calls for a 16 KiB journal.
    // The large database is made under the default threshold and closed (a checkpoint, nothing left
    // running), so no background checkpoint of the small one can still be under way below.
    const { dir, store: making } = await fresh('checkpoint-share');
    for (let i = 0; i < 16; i++) await insert(making, `big-${i}`, new Uint8Array(4096).fill(i));
    await making.close();
    const store = await open(dir, noMigrations, { checkpointBytes: 2048, checkpointJournalShare: 0.25 });
    const snapshotBytes = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')).snapshot.bytes as number;
    expect(snapshotBytes).toBeGreaterThanOrEqual(64 * 1024);
    const threshold = Math.ceil(snapshotBytes / 4);
    const before = store.stats().checkpoints;
    const row = (i: number) => `small-${i}-${'y'.repeat(100)}`;
    let i = 0;
    // Well past the floor, short of the share: no checkpoint.
    for (; i < 1000 && store.stats().journalBytes < threshold - 1024; i++) await insert(store, row(i));
    expect(store.stats().checkpoints).toBe(before);
    expect(store.stats().journalBytes).toBeGreaterThan(4 * 2048);
    // Past it: one starts.
    for (; i < 2000 && store.stats().journalBytes < threshold + 1024; i++) await insert(store, row(i));
    await eventually(() => store.stats().checkpoints > before);
    await store.close();
  });

  it('checkpointThreshold: the floor for a small database, the share of the snapshot for a large one', () => {
    const MiB = 1024 * 1024;
    expect(checkpointThreshold(64 * MiB, 0.25, 0)).toBe(64 * MiB);
    expect(checkpointThreshold(64 * MiB, 0.25, 200 * MiB)).toBe(64 * MiB);
    expect(checkpointThreshold(64 * MiB, 0.25, 2048 * MiB)).toBe(512 * MiB);
    expect(checkpointThreshold(2048, 0, 2048 * MiB)).toBe(2048);
    expect(checkpointThreshold(0, 0.25, 10)).toBe(3); // rounded up: never a checkpoint with nothing new to copy
  });

  it('refuses a negative or non-finite checkpointJournalShare', async () => {
    for (const checkpointJournalShare of [-0.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      await expect(open(await dirs.make('bad-share'), noMigrations, { checkpointJournalShare })).rejects.toThrow(/checkpointJournalShare must be a finite number >= 0/);
    }
  });

  it('a background checkpoint holds the queue only to export: transactions commit while its snapshot is written, and a crash at any point loses nothing', async () => {
    let held = false;
    let release!: () => void;
    const releasing = new Promise<void>((resolve) => (release = resolve));
    const faults = {
      beforeWrite() {},
      async beforeFileWrite(path: string) {
        if (!path.endsWith('snapshot.db.tmp') || held) return;
        held = true; // the first background snapshot waits here until the test lets it go
        await releasing;
      },
    };
    const { dir, store } = await fresh('background-checkpoint', { checkpointBytes: 4096, checkpointJournalShare: 0, faults });
    const written: string[] = [];
    for (let i = 0; !held; i++) {
      written.push(`before-${i}`);
      await insert(store, written.at(-1)!);
    }
    // Its snapshot is being written: the queue is free, commits go on (in the queue they would wait here).
    // (Fewer bytes than checkpointBytes, so no second checkpoint starts while the test copies the directory.)
    for (let i = 0; i < 20; i++) {
      written.push(`during-${i}`);
      await insert(store, written.at(-1)!);
    }
    expect(store.stats().checkpoints).toBe(0);
    const beforeSnapshot = await crashImage(dir, dir + '-mid'); // a crash while the snapshot is written
    const whole = store.stats().journalBytes;
    release();
    await eventually(() => store.stats().checkpoints > 0);
    // Cut to what came after the export: at least the checkpointBytes that called for it are gone.
    expect(whole - store.stats().journalBytes).toBeGreaterThanOrEqual(4096);
    const afterCut = await crashImage(dir, dir + '-cut');
    for (const image of [beforeSnapshot, afterCut]) {
      const again = await open(image, noMigrations);
      expect(await names(again)).toEqual(written);
      await again.close();
    }
    written.push('after');
    await insert(store, 'after');
    await store.close();
    const reopened = await open(dir, noMigrations);
    expect(await names(reopened)).toEqual(written);
    await reopened.close();
  });

  it('a background checkpoint whose journal cut fails leaves the whole journal in place and the store working', async () => {
    const logs: string[] = [];
    const faults = {
      beforeWrite(path: string) {
        if (path.endsWith('journal.log.tmp')) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', path });
      },
    };
    const { dir, store } = await fresh('background-cut-fails', { checkpointBytes: 2048, checkpointJournalShare: 0, faults, onLog: (level: string, msg: string) => logs.push(`${level} ${msg}`) });
    const written: string[] = [];
    for (let i = 0; i < 40; i++) {
      written.push(`row-${i}-${'x'.repeat(50)}`);
      await insert(store, written.at(-1)!);
    }
    await eventually(() => logs.some((line) => line.startsWith('error background checkpoint failed')));
    expect(store.storageState()).toBe('ok');
    expect(store.stats().checkpoints).toBe(0);
    expect(store.stats().journalBytes).toBeGreaterThan(2048); // nothing was cut
    await insert(store, 'after');
    written.push('after');
    const image = await crashImage(dir, dir + '-img'); // snapshot.db is the new one; the journal still starts before it
    const again = await open(image, noMigrations);
    expect(await names(again)).toEqual(written);
    await again.close();
    await store.close();
  });

  it('a journal cut whose directory fsync fails degrades the store until the disk answers, losing nothing', async () => {
    const disk = { failing: false, cutWritten: false };
    const faults = {
      beforeWrite() {},
      async beforeFileWrite(path: string) {
        if (path.endsWith('journal.log.tmp')) disk.cutWritten = true;
      },
      beforeDirSync(dir: string) {
        // The directory fsync right after the cut's rename fails, and every one after it until the disk recovers.
        if (disk.cutWritten && !disk.failing && store.storageState() === 'ok') disk.failing = true;
        if (disk.failing) throw Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO', path: dir });
      },
    };
    const { dir, store } = await fresh('cut-dir-sync-fails', { checkpointBytes: 2048, checkpointJournalShare: 0, faults, storageProbeIntervalMs: 20 });
    const written: string[] = [];
    for (let i = 0; !disk.failing; i++) {
      const name = `row-${i}-${'x'.repeat(50)}`;
      try {
        await insert(store, name);
        written.push(name);
      } catch (err) {
        // Queued behind the failed cut: refused before it ran.
        expect((err as Error).message).toMatch(/storage unavailable/);
      }
    }
    await eventually(() => store.storageState() === 'degraded');
    await expect(insert(store, 'refused')).rejects.toThrow(/storage unavailable/);
    expect(await names(store)).toEqual(written); // reads go on
    const whileDegraded = await crashImage(dir, dir + '-degraded');
    const again = await open(whileDegraded, noMigrations);
    expect(await names(again)).toEqual(written);
    await again.close();
    disk.failing = false;
    disk.cutWritten = false;
    await eventually(() => store.storageState() === 'ok');
    written.push('after recovery');
    await insert(store, 'after recovery');
    expect(await names(store)).toEqual(written);
    await store.close();
    const reopened = await open(dir, noMigrations);
    expect(await names(reopened)).toEqual(written);
    await reopened.close();
  });

  it('a journal write failure rejects the transaction and degrades the store: reads go on, writes are refused until a write succeeds again', async () => {
    const disk = { full: false };
    const faults = {
      // The disk refuses the store's probe while it is "full"; the journal's own write fails below.
      beforeWrite(path: string) {
        if (disk.full && !path.endsWith('journal.log')) throw Object.assign(new Error(`ENOSPC: no space left on device, write`), { code: 'ENOSPC', path });
      },
    };
    const logs: string[] = [];
    const { dir, store } = await fresh('fsync-failure', { faults, storageProbeIntervalMs: 20, onLog: (level: string, msg: string) => logs.push(`${level} ${msg}`) });
    await insert(store, 'ok');
    const probe = await openFile(join(dir, 'journal.log'), 'r');
    const proto = Object.getPrototypeOf(probe) as { write: () => Promise<unknown>; datasync: () => Promise<void> };
    await probe.close();
    // The journal's write is durable when it returns (O_DSYNC) or followed by datasync: fail whichever makes it durable.
    const eio = () => Object.assign(new Error('EIO: i/o error'), { code: 'EIO' });
    const spies = [vi.spyOn(proto, 'write').mockRejectedValueOnce(eio()), vi.spyOn(proto, 'datasync').mockRejectedValueOnce(eio())];
    disk.full = true; // the probe keeps failing until the disk is freed
    try {
      const err = await insert(store, 'lost').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StorageUnavailableError);
      expect(err).toBeInstanceOf(StoreUnavailableError);
      expect((err as StorageUnavailableError).retryAfterSeconds).toBeGreaterThanOrEqual(1);
      expect((err as Error).message).toContain(join(dir, 'journal.log'));
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
    expect(store.isOpen()).toBe(false);
    expect(store.storageState()).toBe('degraded');
    expect(logs.some((l) => l.startsWith('error storage write failed'))).toBe(true);
    await expect(insert(store, 'after')).rejects.toBeInstanceOf(StorageUnavailableError);
    // reads answer from memory, which holds only what was acknowledged
    expect(await names(store)).toEqual(['ok']);
    disk.full = false; // space freed: the store heals by itself, no restart
    await eventually(() => store.storageState() === 'ok');
    expect(store.isOpen()).toBe(true);
    await insert(store, 'healed');
    expect(await names(store)).toEqual(['ok', 'healed']);
    const image = await crashImage(dir, dir + '-img');
    await store.close();
    const again = await open(image, noMigrations);
    expect(await names(again)).toEqual(['ok', 'healed']); // 'lost' was never acknowledged and is not there
    await again.close();
  });

  it('its row memo forgets what a rolled-back transaction or one that never became durable remembered', async () => {
    const disk = { full: false };
    const faults = {
      beforeWrite(path: string) {
        if (disk.full) throw Object.assign(new Error(`ENOSPC: no space left on device, write`), { code: 'ENOSPC', path });
      },
    };
    const { store } = await fresh('memo', { faults, storageProbeIntervalMs: 20 });
    const remembered = () => store.read(async (db) => db.memo!.get<string>('last'));
    await store.transaction(async (tx) => {
      await tx.run('INSERT INTO items (name) VALUES (?)', ['kept']);
      tx.memo!.set('last', 'kept');
    });
    expect(await remembered()).toBe('kept');

    await expect(
      store.transaction(async (tx) => {
        tx.memo!.set('last', 'rolled back');
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    expect(await remembered()).toBeUndefined();

    await store.transaction(async (tx) => tx.memo!.set('last', 'kept'));
    disk.full = true;
    const failed = store.transaction(async (tx) => {
      await tx.run('INSERT INTO items (name) VALUES (?)', ['lost']);
      tx.memo!.set('last', 'lost');
    });
    await expect(failed).rejects.toBeInstanceOf(StorageUnavailableError);
    disk.full = false;
    await eventually(() => store.storageState() === 'ok');
    // Memory was rebuilt from disk without 'lost': the memo must not remember it either.
    expect(await remembered()).toBeUndefined();
    expect(await names(store)).toEqual(['kept']);
    await store.close();
  });

  it('rejects work after close', async () => {
    const { store } = await fresh('closed');
    const pending = insert(store, 'queued-before-close');
    const closing = store.close();
    await pending; // queued work finishes
    await closing;
    await expect(insert(store, 'late')).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(store.read(async () => 1)).rejects.toThrow(/closed/);
    await store.close(); // idempotent
  });
});
