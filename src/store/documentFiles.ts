/**
 * Document bytes on disk: DATA_DIR/documents/<documentId>, named by id only (never by the
 * client's file name). A file is moved in under a temporary name, fsynced, then renamed, and the
 * directory fsynced, so a crash leaves either the whole file or none under the final name.
 * Uploads are received into DATA_DIR/uploads-incoming (the same file system, so the move is a
 * rename, not a copy).
 */
import { createReadStream, rmSync, type ReadStream } from 'node:fs';
import { copyFile, mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { isId } from '../ids.ts';

export function documentsDir(dataDir: string): string {
  return path.join(dataDir, 'documents');
}

/** Where multipart uploads are written while a request is read (one subdirectory per request). */
export function incomingDir(dataDir: string): string {
  return path.join(dataDir, 'uploads-incoming');
}

/**
 * Empties the upload area. Called once when the app is built: only this process uses the data
 * directory (the store holds its lock), so anything there was left by a process that died mid-upload.
 */
export function clearIncoming(dataDir: string): void {
  rmSync(incomingDir(dataDir), { recursive: true, force: true });
}

export function documentPath(dataDir: string, documentId: string): string {
  if (!isId('doc', documentId)) throw new Error(`not a document id: ${documentId}`);
  return path.join(documentsDir(dataDir), documentId);
}

async function fsyncPath(target: string, flags: string): Promise<void> {
  const handle = await open(target, flags);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** The first `count` bytes of a file (fewer when it is shorter). */
export async function readHead(file: string, count: number): Promise<Uint8Array> {
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.alloc(count);
    const { bytesRead } = await handle.read(buffer, 0, count, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/**
 * Moves the received file at `sourcePath` to the document's place, durably. On failure nothing
 * is left under the documents directory (the source is the caller's to clean up).
 */
export async function storeDocumentFile(dataDir: string, documentId: string, sourcePath: string): Promise<void> {
  const dir = documentsDir(dataDir);
  const finalPath = documentPath(dataDir, documentId);
  const partial = path.join(dir, `.${documentId}.partial`);
  await mkdir(dir, { recursive: true });
  try {
    try {
      await rename(sourcePath, partial);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
      await copyFile(sourcePath, partial);
    }
    await fsyncPath(partial, 'r+');
    await rename(partial, finalPath);
    await fsyncPath(dir, 'r');
  } catch (err) {
    await rm(partial, { force: true });
    await rm(finalPath, { force: true });
    throw err;
  }
}

/** Removes a document's file (used when its metadata could not be committed). */
export async function removeDocumentFile(dataDir: string, documentId: string): Promise<void> {
  await rm(documentPath(dataDir, documentId), { force: true });
}

/** A stream of the document's bytes and their size; throws when the file is missing. */
export async function openDocumentFile(dataDir: string, documentId: string): Promise<{ stream: ReadStream; size: number }> {
  const file = documentPath(dataDir, documentId);
  const { size } = await stat(file);
  return { stream: createReadStream(file), size };
}

/** A document's bytes, or null when its file is gone (deleted since). */
export async function readDocumentFile(dataDir: string, documentId: string): Promise<Buffer | null> {
  try {
    return await readFile(documentPath(dataDir, documentId));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}
