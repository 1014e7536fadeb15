import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newId } from '../../../src/ids.ts';
import { documentsDir, openDocumentFile, readHead, removeDocumentFile, storeDocumentFile } from '../../../src/store/documentFiles.ts';

let dataDir: string;
beforeEach(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'mos-docfiles-'));
});
afterEach(() => rm(dataDir, { recursive: true, force: true }));

async function streamed(documentId: string): Promise<Buffer> {
  const { stream } = await openDocumentFile(dataDir, documentId);
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

describe('document files', () => {
  it('moves a received file to DATA_DIR/documents/<documentId> and reads it back byte for byte', async () => {
    const source = path.join(dataDir, 'received');
    const bytes = Buffer.from('%PDF-1.7\nsome bytes\n');
    await writeFile(source, bytes);
    const documentId = newId('doc');
    await storeDocumentFile(dataDir, documentId, source);
    expect(await readdir(documentsDir(dataDir))).toEqual([documentId]);
    expect((await streamed(documentId)).equals(bytes)).toBe(true);
    expect(Buffer.from(await readHead(path.join(documentsDir(dataDir), documentId), 4)).toString()).toBe('%PDF');
  });

  it('leaves nothing in the documents directory when the move fails', async () => {
    await expect(storeDocumentFile(dataDir, newId('doc'), path.join(dataDir, 'does-not-exist'))).rejects.toThrow();
    expect(await readdir(documentsDir(dataDir))).toEqual([]);
  });

  it('refuses a name that is not a document id (no path from a client ever reaches the disk)', async () => {
    const source = path.join(dataDir, 'received');
    await writeFile(source, 'x');
    await expect(storeDocumentFile(dataDir, '../escape', source)).rejects.toThrow(/not a document id/);
    await expect(removeDocumentFile(dataDir, 'doc-../../x')).rejects.toThrow(/not a document id/);
    expect(await readFile(source, 'utf8')).toBe('x');
  });

  it('removes a stored file', async () => {
    const source = path.join(dataDir, 'received');
    await writeFile(source, 'x');
    const documentId = newId('doc');
    await storeDocumentFile(dataDir, documentId, source);
    await removeDocumentFile(dataDir, documentId);
    expect(await readdir(documentsDir(dataDir))).toEqual([]);
  });
});
