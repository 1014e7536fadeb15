/**
 * Document use cases: upload (sniff the bytes, keep the file under its id, record size and
 * SHA-256, publish `document.uploaded`), list, and download.
 */
import type { Readable } from 'node:stream';
import type { components } from '../../generated/api.d.ts';
import type { AppContext } from '../context.ts';
import { recordAuditNow } from './audit.ts';
import { acceptsDocuments } from '../domain/applications/stateMachine.ts';
import { SNIFF_BYTES, sniffContentType } from '../domain/documents/magicBytes.ts';
import { displayFileName } from '../domain/documents/fileName.ts';
import { isDocumentType, type DocumentType } from '../domain/documents/types.ts';
import { publish } from '../events/outbox.ts';
import type { MultipartUpload, UploadedFile } from '../contract/uploads.ts';
import { isLivemode } from '../domain/accounts/environments.ts';
import { fail } from '../errors.ts';
import { newId } from '../ids.ts';
import { findApplication, findApplicationForUpdate } from '../store/applications.ts';
import { documentContent } from '../store/documentContent.ts';
import { readHead } from '../store/documentFiles.ts';
import { findDocument, insertDocument, listDocuments as listDocumentRecords, type DocumentRecord } from '../store/documents.ts';
import type { Page, PageRequest } from '../store/pagination.ts';
import type { SqlExecutor } from '../store/store.ts';
import { satisfyByEvidence } from './conditions.ts';
import { applicationNotFound, requireApplication } from './applicationLookup.ts';

export type DocumentView = components['schemas']['Document'];

/** The download URL of a document: its `url`, and the `url` of its event. */
function documentUrl(publicBaseUrl: string, mortgageId: string, documentId: string): string {
  return `${publicBaseUrl}/v1/applications/${mortgageId}/documents/${documentId}/content`;
}

export function toDocument(record: DocumentRecord, publicBaseUrl: string): DocumentView {
  return {
    documentId: record.documentId,
    mortgageId: record.mortgageId,
    documentType: record.documentType,
    contentType: record.contentType,
    sizeBytes: record.sizeBytes,
    sha256: record.sha256,
    fileName: record.fileName,
    url: documentUrl(publicBaseUrl, record.mortgageId, record.documentId),
    createdAt: record.createdAt,
    livemode: isLivemode(record.accountId),
  };
}

/** Exactly one `documentType` of the documented values and exactly one `file` part, nothing else. */
export function readUploadForm(form: MultipartUpload | undefined): { documentType: DocumentType; file: UploadedFile; fileName: string | null } {
  const issues: { pointer: string; message: string }[] = [];
  const types = form?.fields.documentType ?? [];
  const files = form?.files.file ?? [];
  if (types.length === 0) issues.push({ pointer: '/documentType', message: 'is required' });
  else if (types.length > 1) issues.push({ pointer: '/documentType', message: 'must be sent once' });
  else if (!isDocumentType(types[0]!)) {
    issues.push({ pointer: '/documentType', message: 'must be one of income_proof, identity, bank_statement, property_appraisal, other' });
  }
  if (form?.fields.file) issues.push({ pointer: '/file', message: 'must be a file part (with a filename and a Content-Type)' });
  else if (files.length === 0) issues.push({ pointer: '/file', message: 'is required' });
  else if (files.length > 1) issues.push({ pointer: '/file', message: 'must be a single file part' });
  const name = files.length === 1 ? displayFileName(files[0]!.originalFilename) : null;
  if (name && !name.ok) issues.push({ pointer: '/file', message: name.message });
  for (const name of Object.keys(form?.fields ?? {})) {
    if (name !== 'documentType' && name !== 'file') issues.push({ pointer: `/${name}`, message: 'is not a field of this form' });
  }
  for (const name of Object.keys(form?.files ?? {})) {
    if (name !== 'file') issues.push({ pointer: `/${name}`, message: 'is not a field of this form' });
  }
  if (issues.length > 0) throw fail.validation(`${issues[0]!.pointer} ${issues[0]!.message}`, issues);
  return { documentType: types[0] as DocumentType, file: files[0]!, fileName: name?.ok ? name.fileName : null };
}

/** `forUpdate` (inside the write): the row stays locked until commit, so no withdrawal or decision slips in between. */
async function liveApplication(db: SqlExecutor, accountId: string, mortgageId: string, forUpdate = false) {
  const application = await (forUpdate ? findApplicationForUpdate : findApplication)(db, accountId, mortgageId);
  if (!application) throw applicationNotFound(mortgageId);
  if (!acceptsDocuments(application.status)) {
    throw fail.conflict('application_closed', `An application in status ${application.status} takes no more documents.`, {
      currentStatus: application.status,
    });
  }
  return application;
}

/**
 * Keeps an uploaded file as a document of the application. The file is moved into place first
 * and removed again if the metadata cannot be committed, so a document row never lacks its bytes.
 */
export async function uploadDocument(
  ctx: AppContext,
  accountId: string,
  mortgageId: string,
  upload: { documentType: DocumentType; file: UploadedFile; fileName: string | null },
): Promise<DocumentRecord> {
  const { config } = ctx;
  await ctx.store.read((db) => liveApplication(db, accountId, mortgageId));
  const contentType = sniffContentType(await readHead(upload.file.tempPath, SNIFF_BYTES));
  if (contentType === null) {
    throw fail.unsupportedMediaType('The file is not a PDF, PNG or JPEG (judged by its leading bytes, not its name or declared type).');
  }
  const now = ctx.clock.now();
  const record: DocumentRecord = {
    documentId: newId('doc', now.getTime()),
    accountId,
    mortgageId,
    documentType: upload.documentType,
    contentType,
    sizeBytes: upload.file.size,
    sha256: upload.file.sha256,
    fileName: upload.fileName,
    createdAt: now.toISOString(),
  };
  const content = documentContent(ctx.store, config.dataDir);
  await content.prepare(record.documentId, upload.file.tempPath);
  try {
    await ctx.store.transaction(async (tx) => {
      const application = await liveApplication(tx, accountId, mortgageId, true);
      await insertDocument(tx, record);
      await content.write(tx, record.documentId, upload.file.tempPath);
      await publish(tx, {
        accountId,
        occurredAt: now,
        payload: {
          event: 'document.uploaded',
          mortgageId,
          documentType: record.documentType,
          url: documentUrl(config.publicBaseUrl, mortgageId, record.documentId),
        },
      });
      // A document of the right type satisfies the matching open condition by itself.
      await satisfyByEvidence(tx, application, { kind: 'document', documentType: record.documentType }, { documentId: record.documentId }, now);
    });
  } catch (err) {
    await content.discard(record.documentId);
    throw err;
  }
  return record;
}

export async function listDocuments(ctx: AppContext, accountId: string, mortgageId: string, page: PageRequest): Promise<Page<DocumentView>> {
  const found = await ctx.store.read(async (db) => {
    await requireApplication(db, accountId, mortgageId);
    return listDocumentRecords(db, accountId, mortgageId, page);
  });
  return { ...found, items: found.items.map((d) => toDocument(d, ctx.config.publicBaseUrl)) };
}

export async function openDocument(
  ctx: AppContext,
  accountId: string,
  mortgageId: string,
  documentId: string,
): Promise<{ record: DocumentRecord; stream: Readable; size: number }> {
  const record = await ctx.store.read((db) => findDocument(db, accountId, mortgageId, documentId));
  if (!record) throw fail.notFound(`No document ${documentId} of application ${mortgageId} in this account.`);
  const { stream, size } = await documentContent(ctx.store, ctx.config.dataDir).open(documentId);
  // Recorded once the bytes are ready to send (a download that cannot start is no download).
  await recordAuditNow(ctx, {
    accountId,
    action: 'document.downloaded',
    target: { type: 'document', id: documentId },
    change: { before: null, after: { mortgageId, documentType: record.documentType } },
  }).catch((err: unknown) => {
    stream.destroy();
    throw err;
  });
  return { record, stream, size };
}
