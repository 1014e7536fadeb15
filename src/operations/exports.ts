/**
 * /v1/mortgages/export (streamed) and /v1/export-formats (the account's custom formats; writing
 * them needs an admin key, per the spec's x-required-role).
 */
import { decodeCursor, encodeCursor } from '../http/pagination.ts';
import {
  createExportFormat,
  prepareExport,
  removeExportFormat,
  replaceExportFormat,
} from '../services/exports.ts';
import { findExportFormat, listExportFormats, type ExportFormatRecord } from '../store/exportFormats.ts';
import { fail } from '../errors.ts';
import type { OperationHandlers } from './types.ts';

const FORMAT_NAME = /^[a-z0-9][a-z0-9_-]{0,39}$/;

/** The public view of a format: the account is implied by the caller. */
function toExportFormat(record: ExportFormatRecord) {
  const { accountId: _accountId, ...format } = record;
  return format;
}

export const exportOperations = {
  exportMortgages: async ({ query }, ctx) => {
    const { services } = ctx;
    const prepared = await prepareExport(
      { store: services.store, clock: services.clock, log: ctx.log, batchSize: services.config.exportBatchSize },
      ctx.principal.accountId,
      query,
    );
    // Stop reading as soon as the client goes away (the response closes before it finished).
    const disconnected = new AbortController();
    const res = ctx.koa.res;
    res.once('close', () => {
      if (!res.writableFinished) disconnected.abort();
    });
    return {
      status: 200,
      raw: prepared.open(disconnected.signal),
      contentType: prepared.contentType,
      headers: { 'Content-Disposition': prepared.contentDisposition },
    };
  },

  listExportFormats: async ({ query }, ctx) => {
    const page = await ctx.services.store.read((db) =>
      listExportFormats(db, ctx.principal.accountId, { limit: query.limit ?? 20, afterId: decodeCursor(query.cursor, FORMAT_NAME) }),
    );
    return { status: 200, body: { data: page.items.map(toExportFormat), nextCursor: encodeCursor(page.lastId) } };
  },

  createExportFormat: async ({ body }, ctx) => {
    const { services } = ctx;
    const created = await createExportFormat(services.store, services.clock, ctx.principal.accountId, body);
    ctx.log.info({ format: created.name, base: created.base }, 'export format created');
    return { status: 201, body: toExportFormat(created) };
  },

  getExportFormat: async ({ path }, ctx) => {
    const format = await ctx.services.store.read((db) => findExportFormat(db, ctx.principal.accountId, path.formatName));
    if (!format) throw fail.notFound(`No export format "${path.formatName}" in this account.`);
    return { status: 200, body: toExportFormat(format) };
  },

  replaceExportFormat: async ({ path, body }, ctx) => {
    const { services } = ctx;
    const replaced = await replaceExportFormat(services.store, services.clock, ctx.principal.accountId, path.formatName, body);
    ctx.log.info({ format: replaced.name, base: replaced.base }, 'export format replaced');
    return { status: 200, body: toExportFormat(replaced) };
  },

  deleteExportFormat: async ({ path }, ctx) => {
    await removeExportFormat(ctx.services.store, ctx.principal.accountId, path.formatName);
    ctx.log.info({ format: path.formatName }, 'export format deleted');
    return { status: 204, body: undefined };
  },
} satisfies OperationHandlers;
