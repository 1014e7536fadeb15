/**
 * /v1/mortgages/export (streamed), /v1/export-formats (the account's custom formats; writing
 * them needs an admin key, per the spec's x-required-role) and the HMDA register with its check
 * (/v1/exports/hmda-lar, admin keys only).
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
import { checkHmdaLar, prepareHmdaExport } from '../services/hmdaLar.ts';

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

  exportHmdaLar: async ({ query }, ctx) => {
    const prepared = await prepareHmdaExport(ctx, ctx.principal.accountId, query.year);
    return {
      status: 200,
      raw: prepared.open(ctx.signal),
      contentType: 'text/plain; charset=utf-8',
      headers: {
        'Content-Disposition': prepared.contentDisposition,
        'Hmda-Lar-Rows': String(prepared.rows),
        'Hmda-Lar-Rows-Failing-Edits': String(prepared.rowsFailingEdits),
        'Hmda-Lar-Rows-Missing-Fields': String(prepared.rowsMissingFields),
      },
    };
  },

  checkHmdaLar: async ({ query }, ctx) => {
    const { page, ...found } = await checkHmdaLar(ctx, ctx.principal.accountId, query.year, {
      limit: query.limit ?? 20,
      afterId: decodeCursor(query.cursor, 'mtg'),
    });
    return { status: 200, body: { ...found, ...listBody(page) } };
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
