/**
 * Documents over HTTP: multipart upload (type by magic bytes, size and SHA-256 recorded), list,
 * byte-for-byte download, the size limit (413, nothing left on disk), refusals (415, 409, 400),
 * and the document.uploaded event.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { components } from '../../generated/api.d.ts';
import { loadConfig } from '../../src/config.ts';
import { WebhookDispatcher } from '../../src/events/dispatcher.ts';
import { bodyParsers } from '../../src/http/bodyParsers.ts';
import { eventually } from '../helpers/server.ts';
import { startTestApp, type TestAccount, type TestApp } from '../helpers/testApp.ts';
import { deliveriesBeforeSentinel, specPayloadErrors, startReceiver, type Receiver } from '../helpers/webhookReceiver.ts';

type DocumentView = components['schemas']['Document'];

/** Small limit, so the over-limit cases stay fast; the default (20 MiB) is checked on the config. */
const LIMIT = 64 * 1024;

let app: TestApp;
let account: TestAccount;
let dispatcher: WebhookDispatcher;

beforeAll(async () => {
  // One delivery at a time per endpoint: absence checks wait for a sentinel (deliveriesBeforeSentinel).
  app = await startTestApp({ env: { DOCUMENT_MAX_BYTES: String(LIMIT), WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', WEBHOOK_POLL_INTERVAL_MS: '25', WEBHOOK_ENDPOINT_CONCURRENCY: '1' } });
  account = await app.newAccount();
  dispatcher = new WebhookDispatcher(app.ctx).start();
});
afterAll(async () => {
  await dispatcher.stop();
  await app.close();
});

const PNG_HEAD = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
const pdf = (size = 2048) => Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(size - 9)]);
const png = (size = 4096) => Buffer.concat([PNG_HEAD, randomBytes(size - PNG_HEAD.length)]);
const jpeg = (size = 1024) => Buffer.concat([Buffer.from('ffd8ffe0', 'hex'), randomBytes(size - 4)]);

async function newApplication(owner: TestAccount, creditScore = 720): Promise<string> {
  const { data } = await owner.client.POST('/v1/applications', {
    body: {
      applicant: { name: 'Jane Doe', amount: 350000, annualIncome: 120000, monthlyDebts: 650, creditScore },
      term: 30,
      propertyValue: 450000,
    },
  });
  return data!.mortgageId;
}

function form(parts: { documentType?: string | string[]; file?: { bytes: Buffer; type?: string; name?: string }[]; extra?: Record<string, string> }): FormData {
  const body = new FormData();
  for (const value of [parts.documentType ?? []].flat()) body.append('documentType', value);
  for (const file of parts.file ?? []) {
    body.append('file', new Blob([new Uint8Array(file.bytes)], { type: file.type ?? 'application/octet-stream' }), file.name ?? 'upload.bin');
  }
  for (const [name, value] of Object.entries(parts.extra ?? {})) body.append(name, value);
  return body;
}

async function upload(owner: TestAccount, mortgageId: string, body: FormData, headers: Record<string, string> = {}) {
  const response = await app.fetch(`/v1/applications/${mortgageId}/documents`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${owner.apiKey}`, ...headers },
    body,
  });
  return { response, json: (await response.json()) as DocumentView & Record<string, any> };
}

/**
 * Where the documents' bytes are: the files under DATA_DIR/documents on sql.js, the document ids
 * that have chunks in document_chunks on PostgreSQL.
 */
async function storedDocuments(): Promise<string[]> {
  if (app.engine !== 'postgres') return filesUnder(documentsDir());
  const rows = await app.ctx.store.read((db) => db.all<{ document_id: string }>('SELECT DISTINCT document_id FROM document_chunks ORDER BY document_id'));
  return rows.map((r) => r.document_id);
}

async function filesUnder(dir: string): Promise<string[]> {
  try {
    const entries = await readdir(dir, { recursive: true, withFileTypes: true });
    return entries.filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

const documentsDir = () => path.join(app.dataDir, 'documents');
const incomingDir = () => path.join(app.dataDir, 'uploads-incoming');

/** Waits until the upload temp area is empty (it is cleared when each response finishes). */
async function incomingEmpty(): Promise<void> {
  await eventually(async () => (await filesUnder(incomingDir())).length === 0, 3_000);
}

/** A multipart POST with an exact Content-Length or chunked, read even if the server answers before the body is sent. */
function rawUpload(mortgageId: string, body: Buffer, contentType: string, chunked: boolean): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { Authorization: `Bearer ${account.apiKey}`, 'Content-Type': contentType };
    if (!chunked) headers['Content-Length'] = String(body.length);
    const req = http.request(`${app.baseUrl}/v1/applications/${mortgageId}/documents`, { method: 'POST', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    if (chunked) {
      for (let i = 0; i < body.length; i += 16 * 1024) req.write(body.subarray(i, i + 16 * 1024));
      req.end();
    } else {
      req.end(body);
    }
  });
}

async function encoded(body: FormData): Promise<{ bytes: Buffer; contentType: string }> {
  const response = new Response(body);
  return { bytes: Buffer.from(await response.arrayBuffer()), contentType: response.headers.get('content-type')! };
}

describe('uploadDocument', () => {
  it('stores the file, records size and SHA-256, and the download returns it byte for byte', async () => {
    const mortgageId = await newApplication(account);
    const bytes = png(50_000);
    const { response, json } = await upload(account, mortgageId, form({ documentType: 'identity', file: [{ bytes, type: 'image/png', name: 'passport.png' }] }));
    expect(response.status, JSON.stringify(json)).toBe(201);
    expect(json).toMatchObject({
      mortgageId,
      documentType: 'identity',
      contentType: 'image/png',
      sizeBytes: bytes.length,
      sha256: createHash('sha256').update(bytes).digest('hex'),
      fileName: 'passport.png',
      url: `${app.baseUrl}/v1/applications/${mortgageId}/documents/${json.documentId}/content`,
    });
    expect(json.documentId).toMatch(/^doc-[0-9a-z]{26}$/);

    const download = await app.fetch(new URL(json.url).pathname, { headers: { Authorization: `Bearer ${account.apiKey}` } });
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('image/png');
    expect(download.headers.get('content-disposition')).toBe(`attachment; filename="${json.documentId}.png"`);
    expect(Buffer.from(await download.arrayBuffer()).equals(bytes)).toBe(true);
  });

  it('names the stored file by its document id, never by the client file name', async () => {
    const mortgageId = await newApplication(account);
    const { json } = await upload(account, mortgageId, form({ documentType: 'other', file: [{ bytes: pdf(), name: '../../etc/passwd.pdf' }] }));
    expect(json.fileName).toBe('../../etc/passwd.pdf');
    const stored = (await storedDocuments()).map((name) => path.basename(name));
    expect(stored.filter((name) => !name.startsWith('doc-'))).toEqual([]);
    expect(stored).toContain(json.documentId);
  });

  it('keeps a file name of 255 characters as sent; refuses a longer one or one with a control character with 400 and stores nothing', async () => {
    const mortgageId = await newApplication(account);
    const longest = `${'é'.repeat(250)}.pdf😀`; // 255 characters (code points), 256 UTF-16 units
    const kept = await upload(account, mortgageId, form({ documentType: 'other', file: [{ bytes: pdf(), name: longest }] }));
    expect(kept.response.status).toBe(201);
    expect(kept.json.fileName).toBe(longest);
    const listed = await account.client.GET('/v1/applications/{mortgageId}/documents', { params: { path: { mortgageId } } });
    expect(listed.data!.data.map((d) => d.fileName)).toEqual([longest]);
    const storedBefore = await storedDocuments();
    for (const [name, message] of [
      ['x'.repeat(100_000), 'the file name must be at most 255 characters'],
      [`${'x'.repeat(255)}y`, 'the file name must be at most 255 characters'],
      ['a\u0000b.pdf', 'the file name must not contain control characters'],
      ['a\u001bb.pdf', 'the file name must not contain control characters'],
    ] as const) {
      const { response, json } = await upload(account, mortgageId, form({ documentType: 'other', file: [{ bytes: pdf(), name }] }));
      expect(response.status, name.slice(0, 20)).toBe(400);
      expect(json.code).toBe('validation_failed');
      expect((json.errors as Array<{ pointer: string; message: string }>)[0]).toMatchObject({ pointer: '/file', message: expect.stringContaining(message) });
    }
    expect(await storedDocuments()).toEqual(storedBefore);
    const after = await account.client.GET('/v1/applications/{mortgageId}/documents', { params: { path: { mortgageId } } });
    expect(after.data!.data).toHaveLength(1);
    await incomingEmpty();
  });

  it('trusts the magic bytes, not the declared type: a PDF sent as image/png is stored as a PDF', async () => {
    const mortgageId = await newApplication(account);
    const { json } = await upload(account, mortgageId, form({ documentType: 'income_proof', file: [{ bytes: pdf(), type: 'image/png', name: 'payslip.png' }] }));
    expect(json.contentType).toBe('application/pdf');
  });

  it('accepts a JPEG', async () => {
    const mortgageId = await newApplication(account);
    const { response, json } = await upload(account, mortgageId, form({ documentType: 'property_appraisal', file: [{ bytes: jpeg(), type: 'image/jpeg' }] }));
    expect(response.status).toBe(201);
    expect(json.contentType).toBe('image/jpeg');
  });

  it.each([
    ['a GIF declared as image/png', Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00\x00;', 'latin1'), 'image/png'],
    ['a text file declared as application/pdf', Buffer.from('this is not a PDF at all'), 'application/pdf'],
    ['an HTML page declared as image/jpeg', Buffer.from('<html><script>alert(1)</script></html>'), 'image/jpeg'],
  ])('refuses %s with 415 and keeps nothing', async (_label, bytes, type) => {
    const mortgageId = await newApplication(account);
    const before = await storedDocuments();
    const { response, json } = await upload(account, mortgageId, form({ documentType: 'other', file: [{ bytes, type }] }));
    expect(response.status).toBe(415);
    expect(json.code).toBe('unsupported_media_type');
    expect(await storedDocuments()).toEqual(before);
    await incomingEmpty();
    const list = await account.client.GET('/v1/applications/{mortgageId}/documents', { params: { path: { mortgageId } } });
    expect(list.data!.data).toEqual([]);
  });

  it('a chunked upload (no Content-Length, so no bound on what would be read) gets 411 and leaves no file', async () => {
    const mortgageId = await newApplication(account);
    const before = await storedDocuments();
    const { bytes, contentType } = await encoded(form({ documentType: 'income_proof', file: [{ bytes: pdf(1024), type: 'application/pdf' }] }));
    const result = await rawUpload(mortgageId, bytes, contentType, true);
    expect(result.status, result.text).toBe(411);
    expect(JSON.parse(result.text)).toMatchObject({ code: 'length_required', status: 411 });
    await incomingEmpty();
    expect(await storedDocuments()).toEqual(before);
  });

  it.each([
    ['with a Content-Length just over the limit (read, then cut off by the parser)', LIMIT + 1, false],
    ['with a Content-Length far over the limit (refused before reading)', LIMIT + 256 * 1024, false],
  ])('a file over the limit gets 413 and leaves no file, %s', async (_label, size, chunked) => {
    const mortgageId = await newApplication(account);
    const before = await storedDocuments();
    const { bytes, contentType } = await encoded(form({ documentType: 'income_proof', file: [{ bytes: pdf(size), type: 'application/pdf' }] }));
    const result = await rawUpload(mortgageId, bytes, contentType, chunked);
    expect(result.status, result.text).toBe(413);
    expect(JSON.parse(result.text)).toMatchObject({ code: 'payload_too_large', status: 413 });
    await incomingEmpty();
    expect(await storedDocuments()).toEqual(before);
    const list = await account.client.GET('/v1/applications/{mortgageId}/documents', { params: { path: { mortgageId } } });
    expect(list.data!.data).toEqual([]);
  });

  it('a file exactly at the limit is accepted', async () => {
    const mortgageId = await newApplication(account);
    const { response, json } = await upload(account, mortgageId, form({ documentType: 'bank_statement', file: [{ bytes: pdf(LIMIT) }] }));
    expect(response.status, JSON.stringify(json)).toBe(201);
    expect(json.sizeBytes).toBe(LIMIT);
  });

  it.each([
    ['withdrawn', async (id: string) => account.client.POST('/v1/applications/{mortgageId}/withdraw', { params: { path: { mortgageId: id } } })],
    ['declined', null],
  ] as const)('refuses uploads to a %s application with 409 and the current status, keeping nothing', async (status, move) => {
    const mortgageId = status === 'declined' ? await newApplication(account, 540) : await newApplication(account);
    if (move) await move(mortgageId);
    else await account.client.POST('/v1/applications/{mortgageId}/submit', { params: { path: { mortgageId } } });
    const before = await storedDocuments();
    const { response, json } = await upload(account, mortgageId, form({ documentType: 'other', file: [{ bytes: pdf() }] }));
    expect(response.status).toBe(409);
    expect(json).toMatchObject({ code: 'application_closed', currentStatus: status });
    expect(await storedDocuments()).toEqual(before);
    await incomingEmpty();
  });

  it('accepts uploads to approved and referred applications', async () => {
    const approved = await newApplication(account);
    await account.client.POST('/v1/applications/{mortgageId}/submit', { params: { path: { mortgageId: approved } } });
    expect((await upload(account, approved, form({ documentType: 'other', file: [{ bytes: pdf() }] }))).response.status).toBe(201);
  });

  it.each([
    ['documentType missing', '/documentType', form({ file: [{ bytes: pdf() }] })],
    ['documentType not a documented value', '/documentType', form({ documentType: 'selfie', file: [{ bytes: pdf() }] })],
    ['documentType sent twice', '/documentType', form({ documentType: ['identity', 'other'], file: [{ bytes: pdf() }] })],
    ['the file part missing', '/file', form({ documentType: 'identity' })],
    ['the file sent as a plain text field', '/file', form({ documentType: 'identity', extra: { file: '%PDF-1.7 pretend' } })],
    ['an unknown field', '/comment', form({ documentType: 'identity', file: [{ bytes: pdf() }], extra: { comment: 'hi' } })],
  ] as const)('refuses %s with 400 naming %s', async (_label, pointer, body) => {
    const mortgageId = await newApplication(account);
    const { response, json } = await upload(account, mortgageId, body);
    expect(response.status, JSON.stringify(json)).toBe(400);
    expect(json.errors.map((e: { pointer: string }) => e.pointer)).toContain(pointer);
    await incomingEmpty();
  });

  it('refuses two file parts with 400', async () => {
    const mortgageId = await newApplication(account);
    const { response } = await upload(account, mortgageId, form({ documentType: 'identity', file: [{ bytes: pdf() }, { bytes: pdf() }] }));
    expect(response.status).toBe(400);
    await incomingEmpty();
  });

  it("another account's application is 404 and keeps nothing", async () => {
    const mortgageId = await newApplication(account);
    const other = await app.newAccount('Other Lending');
    const before = await storedDocuments();
    const { response } = await upload(other, mortgageId, form({ documentType: 'identity', file: [{ bytes: pdf() }] }));
    expect(response.status).toBe(404);
    expect(await storedDocuments()).toEqual(before);
  });

  it('a member key may upload', async () => {
    const mortgageId = await newApplication(account);
    const response = await app.fetch(`/v1/applications/${mortgageId}/documents`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${account.memberKey}` },
      body: form({ documentType: 'identity', file: [{ bytes: pdf() }] }),
    });
    expect(response.status).toBe(201);
  });

  it('a retried upload with the same Idempotency-Key replays the first document; another file with that key is 422', async () => {
    const mortgageId = await newApplication(account);
    const bytes = pdf();
    const headers = { 'Idempotency-Key': `upload-${mortgageId}` };
    const first = await upload(account, mortgageId, form({ documentType: 'identity', file: [{ bytes }] }), headers);
    const again = await upload(account, mortgageId, form({ documentType: 'identity', file: [{ bytes }] }), headers);
    expect(again.response.headers.get('idempotent-replayed')).toBe('true');
    expect(again.json.documentId).toBe(first.json.documentId);
    const different = await upload(account, mortgageId, form({ documentType: 'identity', file: [{ bytes: pdf() }] }), headers);
    expect(different.response.status).toBe(422);
    const list = await account.client.GET('/v1/applications/{mortgageId}/documents', { params: { path: { mortgageId } } });
    expect(list.data!.data).toHaveLength(1);
  });

  it('files left in the upload area by a process that died mid-upload are removed when the app is built', async () => {
    await mkdir(path.join(incomingDir(), 'req-crashed'), { recursive: true });
    await writeFile(path.join(incomingDir(), 'req-crashed', 'half-an-upload'), randomBytes(1024));
    bodyParsers(app.ctx);
    expect(await filesUnder(incomingDir())).toEqual([]);
  });

  it('the size limit defaults to 20 MiB (DOCUMENT_MAX_BYTES)', () => {
    expect(loadConfig({ DATA_DIR: app.dataDir }).documentMaxBytes).toBe(20 * 1024 * 1024);
    expect(() => loadConfig({ DATA_DIR: app.dataDir, DOCUMENT_MAX_BYTES: 'lots' })).toThrow(/DOCUMENT_MAX_BYTES/);
  });
});

describe('listDocuments', () => {
  it('lists the application’s documents newest first, paged', async () => {
    const mortgageId = await newApplication(account);
    const ids: string[] = [];
    for (const documentType of ['income_proof', 'identity', 'bank_statement']) {
      ids.push((await upload(account, mortgageId, form({ documentType, file: [{ bytes: pdf() }] }))).json.documentId);
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const { data } = await account.member.GET('/v1/applications/{mortgageId}/documents', {
        params: { path: { mortgageId }, query: { limit: 2, ...(cursor ? { cursor } : {}) } },
      });
      seen.push(...data!.data.map((d) => d.documentId));
      cursor = data!.nextCursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual(ids.reverse());
  });

  it("another account's application is 404", async () => {
    const mortgageId = await newApplication(account);
    const other = await app.newAccount('Curious Lending');
    const { response } = await other.client.GET('/v1/applications/{mortgageId}/documents', { params: { path: { mortgageId } } });
    expect(response.status).toBe(404);
  });
});

describe('downloadDocument', () => {
  it("is 404 for another account's document and for a document of another application", async () => {
    const mortgageId = await newApplication(account);
    const otherApplication = await newApplication(account);
    const { json } = await upload(account, mortgageId, form({ documentType: 'identity', file: [{ bytes: pdf() }] }));
    const other = await app.newAccount('Prying Lending');
    const asOther = await app.fetch(`/v1/applications/${mortgageId}/documents/${json.documentId}/content`, { headers: { Authorization: `Bearer ${other.apiKey}` } });
    expect(asOther.status).toBe(404);
    const wrongParent = await app.fetch(`/v1/applications/${otherApplication}/documents/${json.documentId}/content`, {
      headers: { Authorization: `Bearer ${account.apiKey}` },
    });
    expect(wrongParent.status).toBe(404);
  });
});

describe('the document.uploaded event', () => {
  let documentsOnly: Receiver;
  let approvedOnly: Receiver;
  let documentsOnlyId: string;
  let approvedOnlyId: string;
  let owner: TestAccount;

  /** A test event for one of the endpoints: the sentinel of an absence check. */
  const testEvent = (webhookId: string, event: 'application.approved' | 'document.uploaded') => async () =>
    (await owner.client.POST('/v1/webhooks/{webhookId}/test', { params: { path: { webhookId } }, body: { event } })).data!.eventId;

  beforeAll(async () => {
    owner = await app.newAccount('Evented Lending');
    documentsOnly = await startReceiver();
    approvedOnly = await startReceiver();
    documentsOnlyId = (await owner.client.POST('/v1/webhooks', { body: { url: documentsOnly.url(), events: ['document.uploaded'] } })).data!.webhookId;
    approvedOnlyId = (await owner.client.POST('/v1/webhooks', { body: { url: approvedOnly.url(), events: ['application.approved'] } })).data!.webhookId;
  });
  afterAll(async () => {
    await documentsOnly.close();
    await approvedOnly.close();
  });

  it('sends exactly the section 6.2 payload (no timestamp), its url the download URL, to the endpoint that chose it only', async () => {
    const mortgageId = await newApplication(owner);
    const { json } = await upload(owner, mortgageId, form({ documentType: 'income_proof', file: [{ bytes: pdf() }] }));
    const [delivery] = await documentsOnly.waitFor(1);
    expect(specPayloadErrors(delivery!.body)).toBeNull();
    expect(JSON.parse(delivery!.body)).toEqual({ event: 'document.uploaded', mortgageId, documentType: 'income_proof', url: json.url });
    const fetched = await app.fetch(new URL(json.url).pathname, { headers: { Authorization: `Bearer ${owner.apiKey}` } });
    expect(fetched.status).toBe(200);
    expect(await deliveriesBeforeSentinel(approvedOnly, testEvent(approvedOnlyId, 'application.approved'))).toEqual([]);
  });

  it('a refused upload sends nothing', async () => {
    const before = documentsOnly.deliveries.length;
    const mortgageId = await newApplication(owner);
    await upload(owner, mortgageId, form({ documentType: 'income_proof', file: [{ bytes: Buffer.from('not a document') }] }));
    expect(await deliveriesBeforeSentinel(documentsOnly, testEvent(documentsOnlyId, 'document.uploaded'), before)).toEqual([]);
  });
});
