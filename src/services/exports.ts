/**
 * Mortgage exports and custom export formats: the use cases behind /v1/mortgages/export and
 * /v1/export-formats.
 *
 * An export is prepared in two steps so that every refusal is a proper problem response: first
 * `prepareExport` checks everything (format, fields, dates) and reads where the export stops,
 * before a byte is sent; then `open` streams it. The stream is an async generator behind
 * `Readable.from`, which asks for the next chunk only when the consumer (the HTTP response, and
 * behind it the client's TCP window) wants more, so a slow client slows the reading rather than
 * filling memory; each chunk is one batch of rows (src/store/exportRecords.ts `exportBatches`).
 */
import { Readable } from 'node:stream';
import type { components, operations } from '../../generated/api.d.ts';
import type { AppContext } from '../context.ts';
import { recordAudit, recordAuditNow } from './audit.ts';
import { completeCsvOptions, csvOptionsProblems } from '../domain/exports/csv.ts';
import { createdRangeOrRefuse } from './createdRange.ts';
import { EXPORT_FIELD_NAMES, parseFieldList, type FieldDefinition } from '../domain/exports/fields.ts';
import {
  BUILT_IN_FORMATS,
  acceptsFieldSelection,
  contentDisposition,
  createExportWriter,
  csvLayoutOf,
  isBuiltInFormat,
  mediaOf,
  specOfCustomFormat,
  type ExportFormatSpec,
  type ExportWriter,
} from '../domain/exports/formats.ts';
import { isLivemode } from '../domain/accounts/environments.ts';
import type { ExportSource } from '../domain/exports/fields.ts';
import { exportNeedsRowRendering, exportRecordRenderer, exportStatusRenames, statusFilterIn } from '../domain/versions/registry.ts';
import { fail } from '../errors.ts';
import type { Logger } from '../log.ts';
import { recordExport } from '../observability/outcomes.ts';
import { traceContextApi, type Span } from '../observability/tracing.ts';
import {
  countExportFormats,
  deleteExportFormat as deleteFormatRow,
  exportFormatNames,
  findExportFormat,
  insertExportFormat,
  listExportFormats as listExportFormatRecords,
  updateExportFormat,
  type ExportFormatRecord,
} from '../store/exportFormats.ts';
import { exportCsvLines } from '../store/exportCsvLines.ts';
import { exportBatches, exportBounds, type ExportQuery } from '../store/exportRecords.ts';
import type { Page, PageRequest } from '../store/pagination.ts';

/** The HMDA register's name: no custom format may take it (GET /v1/exports/hmda-lar is that export). */
const HMDA_LAR_FORMAT = 'hmda-lar';

/** An account holds at most this many custom formats (so `validFormats` and the list stay small). */
export const MAX_EXPORT_FORMATS = 100;

/** The first batch is small so the first records leave quickly; later ones use the configured size. */
const FIRST_BATCH_ROWS = 100;

/**
 * A batch is written out in pieces of about this many characters. Strings past V8's large-object
 * threshold (128 KiB) live in the old generation until a full collection, so whole-batch strings
 * (hundreds of KiB each) piled up and grew the heap by 100+ MiB over an export; pieces this small
 * die young, in the cheap scavenges.
 */
const PIECE_CHARS = 16 * 1024;

/** The export's query parameters, as the contract defines them. */
export type ExportRequest = NonNullable<operations['exportMortgages']['parameters']['query']>;

export interface PreparedExport {
  contentType: string;
  contentDisposition: string;
  /** Starts streaming. `signal` stops the reading (the client went away). */
  open(signal: AbortSignal): Readable;
}

function selectedFields(spec: ExportFormatSpec, formatName: string, fields: string | undefined): FieldDefinition[] | null {
  if (fields === undefined) return null;
  if (!acceptsFieldSelection(spec)) {
    throw fail.invalid('fields_not_supported', `The custom format "${formatName}" defines its own columns; leave out fields.`, [
      { pointer: '#/query/fields', message: `is not accepted with format ${formatName}` },
    ]);
  }
  const parsed = parseFieldList(fields);
  if (!parsed.ok) {
    const named = parsed.unknown.map((name) => JSON.stringify(name)).join(', ');
    throw fail.invalid('unknown_fields', `fields names unknown fields: ${named}. Known fields: ${EXPORT_FIELD_NAMES.join(', ')}.`, [
      { pointer: '#/query/fields', message: `unknown fields: ${named}` },
    ]);
  }
  return parsed.fields;
}

/**
 * Checks an export request and reads where it stops; throws the problem to answer when anything
 * is wrong. Nothing has been sent yet when this throws. The records are written in `apiVersion`
 * (the caller's): its `status` filter means what that version means by it, and each row is
 * rendered by the version changes as it streams.
 */
export async function prepareExport(ctx: AppContext, accountId: string, request: ExportRequest, apiVersion: string): Promise<PreparedExport> {
  const formatName = (request.format ?? 'json').toLowerCase();
  const { createdFrom, createdTo } = createdRangeOrRefuse(request);

  const { custom, names, bounds } = await ctx.store.read(async (db) => {
    const custom = isBuiltInFormat(formatName) ? undefined : await findExportFormat(db, accountId, formatName);
    const names = isBuiltInFormat(formatName) || custom ? [] : await exportFormatNames(db, accountId);
    const bounds = await exportBounds(db, accountId);
    return { custom, names, bounds };
  });
  let spec: ExportFormatSpec;
  if (formatName === 'json' || formatName === 'ndjson') spec = { base: formatName };
  else if (formatName === 'csv') spec = { base: 'csv', custom: null };
  else if (custom) spec = specOfCustomFormat(custom);
  else {
    const validFormats = [...BUILT_IN_FORMATS, ...names];
    // The HMDA register is an export of its own: a year, not a filter of records, and admins only.
    const hint = formatName === HMDA_LAR_FORMAT ? ' The HMDA register is GET /v1/exports/hmda-lar?year=YYYY, with an admin key.' : '';
    throw fail.invalid(
      'unknown_format',
      `There is no export format "${formatName}"; valid formats: ${validFormats.join(', ')}.${hint}`,
      [{ pointer: '#/query/format', message: 'is not a known format' }],
      { validFormats },
    );
  }
  const fields = selectedFields(spec, formatName, request.fields);

  // Recorded once the request is known good, before the first byte: an export begun is an export run.
  await recordAuditNow(ctx, {
    accountId,
    action: 'export.run',
    target: { type: 'export', id: formatName },
    change: { before: null, after: { format: formatName, status: request.status ?? null, createdFrom: createdFrom ?? null, createdTo: createdTo ?? null, fields: request.fields ?? null } },
  });
  const startedAt = ctx.clock.now().toISOString();
  const media = mediaOf(spec);
  const query: ExportQuery = {
    accountId,
    currency: bounds.currency,
    statuses: request.status === undefined ? undefined : (statusFilterIn(request.status, apiVersion) as ExportQuery['statuses']),
    createdFrom,
    createdTo,
    upToId: bounds.upToId,
  };
  return {
    contentType: media.contentType,
    contentDisposition: contentDisposition(startedAt, media),
    open: (signal) => {
      const writer = createExportWriter(spec, fields, startedAt);
      const render = exportRecordRenderer(apiVersion);
      // CSV that the store writes itself (PostgreSQL's COPY): the lines arrive as bytes, the writer writes the header.
      // An older version's status names go into the COPY too; a change that rewrites more of a record
      // sends the rows through the writer, rendered one by one.
      const layout = exportNeedsRowRendering(apiVersion) ? null : csvLayoutOf(spec, fields);
      const lines = layout === null ? null : exportCsvLines(ctx.store, { ...query, statusShownAs: exportStatusRenames(apiVersion) ?? undefined }, layout);
      const log = ctx.log.child({ export: formatName });
      // The stream outlives the handler: its span (a child of the use case's) ends with it.
      const span = ctx.tracer?.startSpan('export.stream', { attributes: { 'mos.export.format': spec.base } }, traceContextApi.active()) ?? null;
      const observed = { format: spec.base, span };
      return Readable.from(exportChunks(ctx, query, writer, lines, render, ctx.config.exportBatchSize, signal, log, observed), {
        objectMode: false,
        // A few pieces are buffered ahead at most: the next batch is read only once they have gone on.
        highWaterMark: 64 * 1024,
      });
    },
  };
}

/**
 * The export's text, a batch at a time, pulled by the stream as the client takes it: rows written
 * by `writer`, or, when the store writes the lines itself (`lines`), its bytes as they come.
 */
async function* exportChunks(
  ctx: AppContext,
  query: ExportQuery,
  writer: ExportWriter,
  lines: AsyncGenerator<{ bytes: Buffer; rows: number }> | null,
  render: ((record: ExportSource) => ExportSource) | null,
  batchSize: number,
  signal: AbortSignal,
  log: Logger,
  observed: { format: string; span: Span | null },
): AsyncGenerator<string | Buffer> {
  const started = performance.now();
  let records = 0;
  let batches = 0;
  let bytes = 0;
  let finished = false;
  let failed = false;
  const counting = ctx.metrics !== null || observed.span !== null;
  try {
    const opening = writer.begin();
    if (counting) bytes += Buffer.byteLength(opening);
    if (opening !== '') yield opening;
    let pieceRows = 16;
    let stopped = signal.aborted;
    if (!stopped && lines !== null) {
      // Leaving the loop (client gone) ends the generator, which ends the COPY.
      for await (const piece of lines) {
        batches++;
        if (signal.aborted) break;
        records += piece.rows;
        bytes += piece.bytes.length;
        if (piece.bytes.length > 0) yield piece.bytes;
        if (signal.aborted) break;
      }
      stopped = signal.aborted;
    } else if (!stopped) {
      // Batches come from the store: keyset pages on sql.js, a server-side cursor on PostgreSQL.
      // Leaving the loop (client gone) ends the generator, which ends the query.
      const source = exportBatches(ctx.store, query, { first: Math.min(FIRST_BATCH_ROWS, batchSize), rest: batchSize });
      for await (const rows of source) {
        batches++;
        if (signal.aborted) break;
        records += rows.length;
        // In the caller's version, in place: each row as it is about to be written, nothing held beyond the batch.
        if (render !== null) for (let i = 0; i < rows.length; i++) rows[i] = render(rows[i]!);
        // Pieces are taken off the front of the batch (splice), so the rows already written are
        // garbage while the generator waits for the client: a scavenge then finds less alive, and
        // less survives to grow the young generation (see PIECE_CHARS).
        while (rows.length > 0) {
          const taken = rows.splice(0, pieceRows);
          const piece = writer.batch(taken);
          // Aim the next piece at PIECE_CHARS from the size of this one's rows.
          pieceRows = Math.max(1, Math.min(1000, Math.floor((PIECE_CHARS * taken.length) / Math.max(1, piece.length))));
          if (counting) bytes += Buffer.byteLength(piece);
          if (piece !== '') yield piece;
        }
        if (signal.aborted) break;
      }
      stopped = signal.aborted;
    }
    finished = !stopped;
    if (finished) {
      const closing = writer.end();
      if (counting) bytes += Buffer.byteLength(closing);
      if (closing !== '') yield closing;
      log.info({ records, batches, ms: Math.round(performance.now() - started) }, 'export finished');
    }
  } catch (err) {
    // The stream being destroyed because the client went away also lands here (the generator is
    // told with the stream's error); only anything else is a failure of ours.
    const clientGone = signal.aborted || (err as { code?: string }).code === 'ERR_STREAM_PREMATURE_CLOSE';
    if (!clientGone) {
      failed = true;
      log.error({ err, records, batches }, 'export failed after the response began; the response is cut short');
    }
    throw err;
  } finally {
    if (!finished && !failed) log.info({ records, batches }, 'export stopped: the client went away');
    const outcome = finished ? 'finished' : failed ? 'failed' : 'client_gone';
    recordExport(ctx.metrics, observed, outcome, records, bytes);
  }
}

// ---- custom formats ----------------------------------------------------------------------

type CreateBody = components['schemas']['ExportFormatCreateRequest'];
type ReplaceBody = components['schemas']['ExportFormatReplaceRequest'];

/** The definition part of a create or replace body, checked and with defaults filled in. */
function definitionOf(body: ReplaceBody): Pick<ExportFormatRecord, 'base' | 'description' | 'csv'> {
  if (body.base === 'mismo') {
    if (body.csv !== undefined) {
      throw fail.validation('/csv applies only to formats with base csv', [{ pointer: '/csv', message: 'applies only when base is csv' }]);
    }
    return { base: 'mismo', description: body.description ?? null, csv: null };
  }
  const csv = body.csv ?? {};
  const broken = csvOptionsProblems(csv);
  if (broken.length > 0) throw fail.refused('ambiguous_number_format', broken.join('; '));
  return { base: 'csv', description: body.description ?? null, csv: completeCsvOptions(csv) };
}

export async function createExportFormat(ctx: AppContext, accountId: string, body: CreateBody): Promise<ExportFormat> {
  if (isBuiltInFormat(body.name) || body.name === HMDA_LAR_FORMAT) {
    throw fail.refused('reserved_format_name', `"${body.name}" is a built-in format's name; choose another.`);
  }
  const definition = definitionOf(body);
  return ctx.store.transaction(async (tx) => {
    if (await findExportFormat(tx, accountId, body.name)) {
      throw fail.conflict('format_name_taken', `The account already has an export format named "${body.name}"; replace it with PUT.`);
    }
    if ((await countExportFormats(tx, accountId)) >= MAX_EXPORT_FORMATS) {
      throw fail.refused('too_many_formats', `An account holds at most ${MAX_EXPORT_FORMATS} export formats; delete one first.`);
    }
    const now = ctx.clock.now().toISOString();
    const record: ExportFormatRecord = { accountId, name: body.name, ...definition, createdAt: now, updatedAt: now };
    await insertExportFormat(tx, record);
    await recordAudit(tx, ctx, { accountId, action: 'exportFormat.created', target: { type: 'exportFormat', id: body.name }, change: { before: null, after: auditedFormat(record) } });
    return toExportFormat(record);
  });
}

export async function replaceExportFormat(
  ctx: AppContext,
  accountId: string,
  name: string,
  body: ReplaceBody,
): Promise<ExportFormat> {
  const definition = definitionOf(body);
  return ctx.store.transaction(async (tx) => {
    const existing = await findExportFormat(tx, accountId, name);
    if (!existing) throw fail.notFound(`No export format "${name}" in this account.`);
    const record: ExportFormatRecord = { ...existing, ...definition, updatedAt: ctx.clock.now().toISOString() };
    await updateExportFormat(tx, record);
    await recordAudit(tx, ctx, { accountId, action: 'exportFormat.replaced', target: { type: 'exportFormat', id: name }, change: { before: auditedFormat(existing), after: auditedFormat(record) } });
    return toExportFormat(record);
  });
}

export async function removeExportFormat(ctx: AppContext, accountId: string, name: string): Promise<void> {
  const deleted = await ctx.store.transaction(async (tx) => {
    const existing = await findExportFormat(tx, accountId, name);
    if (!existing || !(await deleteFormatRow(tx, accountId, name))) return false;
    await recordAudit(tx, ctx, { accountId, action: 'exportFormat.deleted', target: { type: 'exportFormat', id: name }, change: { before: auditedFormat(existing), after: null } });
    return true;
  });
  if (!deleted) throw fail.notFound(`No export format "${name}" in this account.`);
}

/** What the audit log keeps of a format: its definition, without the account and times. */
function auditedFormat(record: ExportFormatRecord) {
  const { accountId: _account, createdAt: _created, updatedAt: _updated, ...definition } = record;
  return definition;
}

export type ExportFormat = components['schemas']['ExportFormat'];

/** The public view of a format: the account is implied by the caller. */
function toExportFormat(record: ExportFormatRecord): ExportFormat {
  const { accountId, ...format } = record;
  return { ...format, livemode: isLivemode(accountId) };
}

export async function listExportFormats(ctx: AppContext, accountId: string, page: PageRequest): Promise<Page<ExportFormat>> {
  const found = await ctx.store.read((db) => listExportFormatRecords(db, accountId, page));
  return { ...found, items: found.items.map(toExportFormat) };
}

export async function getExportFormat(ctx: AppContext, accountId: string, name: string): Promise<ExportFormat> {
  const format = await ctx.store.read((db) => findExportFormat(db, accountId, name));
  if (!format) throw fail.notFound(`No export format "${name}" in this account.`);
  return toExportFormat(format);
}
