/**
 * /v1/mortgages/export (streamed) and /v1/export-formats (the account's custom formats; writing
 * them needs an admin key, per the spec's x-required-role).
 */
import type { OperationHandlers } from '../contract/handlers.ts';
import { isExportFormatName } from '../domain/exports/formats.ts';
import { decodeCursor, listBody } from '../http/pagination.ts';
import {
  createExportFormat,
  getExportFormat,
  listExportFormats,
  prepareExport,
  removeExportFormat,
  replaceExportFormat,
} from '../services/exports.ts';

export const exportOperations = {
  exportMortgages: async ({ query }, ctx) => {
    const prepared = await prepareExport(ctx, ctx.principal.accountId, query, ctx.apiVersion);
    return {
      status: 200,
      raw: prepared.open(ctx.signal),
      contentType: prepared.contentType,
      headers: { 'Content-Disposition': prepared.contentDisposition },
    };
  },

  listExportFormats: async ({ query }, ctx) => {
    const page = await listExportFormats(ctx, ctx.principal.accountId, {
      limit: query.limit ?? 20,
      afterId: decodeCursor(query.cursor, isExportFormatName),
    });
    return { status: 200, body: listBody(page) };
  },

  createExportFormat: async ({ body }, ctx) => {
    const created = await createExportFormat(ctx, ctx.principal.accountId, body);
    ctx.log.info({ format: created.name, base: created.base }, 'export format created');
    return { status: 201, body: created };
  },

  getExportFormat: async ({ path }, ctx) => ({ status: 200, body: await getExportFormat(ctx, ctx.principal.accountId, path.formatName) }),

  replaceExportFormat: async ({ path, body }, ctx) => {
    const replaced = await replaceExportFormat(ctx, ctx.principal.accountId, path.formatName, body);
    ctx.log.info({ format: replaced.name, base: replaced.base }, 'export format replaced');
    return { status: 200, body: replaced };
  },

  deleteExportFormat: async ({ path }, ctx) => {
    await removeExportFormat(ctx, ctx.principal.accountId, path.formatName);
    ctx.log.info({ format: path.formatName }, 'export format deleted');
    return { status: 204, body: undefined };
  },
} satisfies OperationHandlers;
