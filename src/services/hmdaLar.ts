/**
 * The HMDA loan/application register of a year (GET /v1/exports/hmda-lar) and its check against
 * the FFIEC edits (GET /v1/exports/hmda-lar/check). The file and the edits are pure domain
 * (src/domain/hmda/); here they meet the store and the account's lender settings.
 *
 * The transmittal sheet comes first and holds the number of rows, so the export reads the year
 * twice: a first pass counts the rows and runs the edits (their counts become the `Hmda-Lar-*`
 * headers, sent before the first byte), then the file streams as the mortgage export does, a
 * batch at a time as the client takes it, running the edits again on what it writes. Both passes
 * keep counters only, so memory stays flat over any year. An application that changes between
 * the passes can make the count differ from the rows (edit S304): the stream logs it, and the
 * check and a new export show the state after.
 */
import { Readable } from 'node:stream';
import type { components } from '../../generated/api.d.ts';
import type { AppContext } from '../context.ts';
import { isLivemode } from '../domain/accounts/environments.ts';
import { debtToIncomeOfDecision, denialReasonsOfDecision } from '../domain/hmda/decision.ts';
import { FileChecker, transmittalFailures, type EditFailure } from '../domain/hmda/fileEdits.ts';
import { LAR_FIELD_NAMES, TS_FIELD_NAMES } from '../domain/hmda/layout.ts';
import { larRowOf, type LarRow } from '../domain/hmda/larRow.ts';
import { finalActionOf, yearBounds, type FinalAction } from '../domain/hmda/reportable.ts';
import type { LenderIdentity } from '../domain/hmda/source.ts';
import { pipeLine, transmittalRowOf } from '../domain/hmda/transmittal.ts';
import { fail } from '../errors.ts';
import type { Page } from '../store/pagination.ts';
import { hmdaBatches, hmdaUpperBound, type HmdaQuery } from '../store/hmdaRecords.ts';
import { findLenderIdentity } from '../store/lenderIdentity.ts';
import { recordAuditNow } from './audit.ts';
import { environmentNow } from './environmentClock.ts';

type ApplicationCheck = components['schemas']['HmdaApplicationCheck'];
export type HmdaLarCheck = Omit<components['schemas']['HmdaLarCheck'], 'data' | 'nextCursor'>;

/** A piece of the file is sent once it holds about this many characters (as the mortgage export's pieces). */
const PIECE_CHARS = 16 * 1024;

interface Register {
  query: HmdaQuery;
  lender: LenderIdentity;
  year: number;
}

/** The year asked for, the lender settings and where the register stops; refuses a year still to come. */
async function openRegister(ctx: AppContext, accountId: string, year: number): Promise<Register> {
  const { now, lender, upToId } = await ctx.store.read(async (db) => ({
    now: await environmentNow(ctx, db, accountId),
    lender: await findLenderIdentity(db, accountId),
    upToId: await hmdaUpperBound(db, accountId),
  }));
  if (year > now.getUTCFullYear()) {
    throw fail.refused('year_in_future', `${year} has not begun: a register covers a year up to the current one (${now.getUTCFullYear()}).`);
  }
  return { query: { accountId, ...yearBounds(year), upToId }, lender, year };
}

interface RegisterRow {
  mortgageId: string;
  final: FinalAction;
  row: LarRow;
}

/** The register's rows in file order, built as their batches arrive. */
async function* registerRows(ctx: AppContext, register: Register, signal?: AbortSignal): AsyncGenerator<RegisterRow> {
  const year = register.year;
  for await (const batch of hmdaBatches(ctx.store, register.query, ctx.config.exportBatchSize)) {
    if (signal?.aborted) return;
    for (const { application, reasons } of batch) {
      const final = finalActionOf(application);
      if (final === null || new Date(final.at).getUTCFullYear() !== year) continue;
      const denialReasons = final.action === '3' ? denialReasonsOfDecision(reasons) : [];
      const row = larRowOf({ ...application, denialReasons }, register.lender.lei, final, { debtToIncomePercent: debtToIncomeOfDecision(reasons) });
      yield { mortgageId: application.mortgageId, final, row };
    }
  }
}

/** A checker primed with the transmittal sheet's LEI (its count is checked apart, once known). */
function checkerFor(register: Register, rows: number): FileChecker {
  const checker = new FileChecker(register.year);
  checker.transmittal(transmittalRowOf(register.lender, register.year, rows).fields);
  return checker;
}

const namesOf = <K extends string>(keys: readonly K[], names: Readonly<Record<K, string>>) => keys.map((key) => names[key]);

/**
 * One pass over the register: its counts, the transmittal sheet's findings, and (up to `limit`,
 * after `afterId`) the applications whose rows fail an edit or miss a field.
 */
async function survey(ctx: AppContext, register: Register, page: { limit: number; afterId?: string | undefined }): Promise<HmdaLarCheck & { page: Page<ApplicationCheck> }> {
  const checker = checkerFor(register, 0);
  let rows = 0;
  let rowsFailingEdits = 0;
  let rowsMissingFields = 0;
  const items: ApplicationCheck[] = [];
  let more = false;
  for await (const { mortgageId, final, row } of registerRows(ctx, register)) {
    rows++;
    const failures = checker.lar(row.fields);
    if (failures.length > 0) rowsFailingEdits++;
    if (row.missing.length > 0) rowsMissingFields++;
    if (failures.length === 0 && row.missing.length === 0) continue;
    if (page.afterId !== undefined && mortgageId <= page.afterId) continue;
    if (items.length === page.limit) {
      more = true;
      continue;
    }
    items.push({ mortgageId, uli: row.fields[2] || null, actionTaken: final.action, failures, missing: namesOf(row.missing, LAR_FIELD_NAMES) });
  }
  const ts = transmittalRowOf(register.lender, register.year, rows);
  return {
    year: register.year,
    livemode: isLivemode(register.query.accountId),
    rows,
    rowsFailingEdits,
    rowsMissingFields,
    transmittal: { failures: transmittalFailures(ts.fields, register.year), missing: namesOf(ts.missing, TS_FIELD_NAMES) },
    // S304 holds by construction within one pass (the sheet is written with the rows' count): none here.
    fileFailures: [],
    page: { items, lastId: more ? (items.at(-1)?.mortgageId ?? null) : null },
  };
}

export async function checkHmdaLar(
  ctx: AppContext,
  accountId: string,
  year: number,
  page: { limit: number; afterId?: string | undefined },
): Promise<HmdaLarCheck & { page: Page<ApplicationCheck> }> {
  return survey(ctx, await openRegister(ctx, accountId, year), page);
}

export interface PreparedHmdaExport {
  contentDisposition: string;
  rows: number;
  rowsFailingEdits: number;
  rowsMissingFields: number;
  open(signal: AbortSignal): Readable;
}

export async function prepareHmdaExport(ctx: AppContext, accountId: string, year: number): Promise<PreparedHmdaExport> {
  const register = await openRegister(ctx, accountId, year);
  const found = await survey(ctx, register, { limit: 0 });
  const tsFailing = found.transmittal.failures.length > 0 ? 1 : 0;
  const tsMissing = found.transmittal.missing.length > 0 ? 1 : 0;
  await recordAuditNow(ctx, {
    accountId,
    action: 'export.run',
    target: { type: 'export', id: 'hmda-lar' },
    change: { before: null, after: { format: 'hmda-lar', year, rows: found.rows } },
  });
  const live = isLivemode(accountId);
  return {
    contentDisposition: `attachment; filename="hmda-lar-${year}${live ? '' : '-test'}.txt"`,
    rows: found.rows,
    rowsFailingEdits: found.rowsFailingEdits + tsFailing,
    rowsMissingFields: found.rowsMissingFields + tsMissing,
    open: (signal) => Readable.from(registerFile(ctx, register, found.rows, signal), { objectMode: false, highWaterMark: 64 * 1024 }),
  };
}

/** The file: the transmittal sheet with the counted rows, then each row, in pieces as the client takes them. */
async function* registerFile(ctx: AppContext, register: Register, rows: number, signal: AbortSignal): AsyncGenerator<string> {
  const log = ctx.log.child({ export: 'hmda-lar', year: register.year });
  const checker = checkerFor(register, rows);
  let written = 0;
  let failing = 0;
  try {
    yield pipeLine(transmittalRowOf(register.lender, register.year, rows).fields);
    let piece = '';
    for await (const { row } of registerRows(ctx, register, signal)) {
      written++;
      if (checker.lar(row.fields).length > 0) failing++;
      piece += pipeLine(row.fields);
      if (piece.length >= PIECE_CHARS) {
        yield piece;
        piece = '';
      }
    }
    if (signal.aborted) {
      log.info({ written }, 'hmda export stopped: the client went away');
      return;
    }
    if (piece !== '') yield piece;
  } catch (err) {
    // The stream destroyed because the client went away lands here too; only anything else is ours.
    if (!signal.aborted && (err as { code?: string }).code !== 'ERR_STREAM_PREMATURE_CLOSE') {
      log.error({ err, written }, 'hmda export failed after the response began; the response is cut short');
    }
    throw err;
  }
  const fileFailures: EditFailure[] = checker.finish();
  if (fileFailures.length > 0) log.warn({ rows, written, edits: fileFailures.map((f) => f.edit) }, 'hmda export: the rows changed while it ran; export again');
  log.info({ rows, rowsFailingEdits: failing }, 'hmda export finished');
}
