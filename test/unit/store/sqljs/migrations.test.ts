import { unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SqlJsStore } from '../../../../src/store/sqljs/sqljsStore.ts';
import { crashImage, migrationsDir, open, tempDirs } from './storeTestUtils.ts';
import type { TempDirs } from './storeTestUtils.ts';

let dirs: TempDirs;
beforeAll(async () => {
  dirs = await tempDirs();
});
afterAll(() => dirs.cleanup());

const M1 = `CREATE TABLE accounts (id INTEGER PRIMARY KEY, email TEXT NOT NULL UNIQUE);
-- seed row: re-applying this file would violate UNIQUE(email)
INSERT INTO accounts (email) VALUES ('admin@example.test');`;
const M2 = `ALTER TABLE accounts ADD COLUMN name TEXT;
CREATE INDEX accounts_name ON accounts (name);`;
const M10 = `CREATE TABLE audit (id INTEGER PRIMARY KEY, account_id INTEGER NOT NULL REFERENCES accounts(id));`;

const applied = (s: SqlJsStore) => s.read((db) => db.all<{ version: string }>('SELECT version FROM schema_migrations ORDER BY version'));
const columns = (s: SqlJsStore) => s.read(async (db) => (await db.all<{ name: string }>('PRAGMA table_info(accounts)')).map((c) => c.name));

describe('migrations', () => {
  it('applies files once, in numeric order, and picks up new files at the next open', async () => {
    const dataDir = await dirs.make('data');
    // 010 sorts after 002 numerically (and lexically); written first to prove order comes from the name
    const migrations = await migrationsDir(dirs, { '010_audit.sql': M10, '002_names.sql': M2, '001_accounts.sql': M1, 'README.md': 'not a migration' });
    await unlink(join(migrations, '010_audit.sql'));
    const store = await open(dataDir, migrations);
    expect(await applied(store)).toEqual([{ version: '001' }, { version: '002' }]);
    expect(await columns(store)).toEqual(['id', 'email', 'name']);
    const appliedAt = await store.read((db) => db.all('SELECT applied_at FROM schema_migrations'));
    expect(appliedAt.every((r) => typeof r.applied_at === 'string' && !Number.isNaN(Date.parse(r.applied_at)))).toBe(true);
    await store.close();

    const second = await open(dataDir, migrations); // nothing new: nothing re-applied (the seed would collide)
    expect(await applied(second)).toEqual([{ version: '001' }, { version: '002' }]);
    await second.close();

    await writeFile(join(migrations, '010_audit.sql'), M10);
    const third = await open(dataDir, migrations);
    expect(await applied(third)).toEqual([{ version: '001' }, { version: '002' }, { version: '010' }]);
    await third.transaction((tx) => tx.run('INSERT INTO audit (account_id) VALUES (1)'));
    const image = await crashImage(dataDir, dataDir + '-img');
    await third.close();

    // migrations are journalled like any write: a crash image replays them identically
    const fourth = await open(image, migrations);
    expect(await applied(fourth)).toEqual([{ version: '001' }, { version: '002' }, { version: '010' }]);
    expect(await fourth.read((db) => db.get('SELECT count(*) AS n FROM audit'))).toEqual({ n: 1 });
    await fourth.close();
  });

  it('a failing migration fails the open, keeps earlier migrations, and writes nothing of itself', async () => {
    const dataDir = await dirs.make('failing');
    const migrations = await migrationsDir(dirs, { '001_accounts.sql': M1, '002_broken.sql': 'CREATE TABLE ok (a); CREATE TABLE broken (;' });
    await expect(open(dataDir, migrations)).rejects.toThrow(/migration 002_broken.sql failed/);
    await writeFile(join(migrations, '002_broken.sql'), M2);
    const store = await open(dataDir, migrations);
    expect(await applied(store)).toEqual([{ version: '001' }, { version: '002' }]);
    expect(await store.read((db) => db.all("SELECT name FROM sqlite_master WHERE name IN ('ok', 'broken')"))).toEqual([]);
    await store.close();
  });

  it('rejects badly named or duplicate-version files', async () => {
    const dataDir = await dirs.make('badnames');
    await expect(open(dataDir, await migrationsDir(dirs, { 'accounts.sql': M1 }))).rejects.toThrow(/not named NNN_name.sql/);
    await expect(open(dataDir, await migrationsDir(dirs, { '001_a.sql': M1, '1_b.sql': M2 }))).rejects.toThrow(/share version/);
  });
});
