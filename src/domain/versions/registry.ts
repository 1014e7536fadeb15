/**
 * The API's versions and the changes between them, in order. A version is a date; the first is
 * the contract of the first release (the interface document's shapes), the newest is the contract
 * in openapi/. Each change module under changes/ says how to render the newer shape in the version
 * before it; rendering for a caller on version V undoes, newest first, every change newer than V.
 */
import type { ExportSource } from '../exports/fields.ts';
import { ABSENT, type Json, type SpecDocument, type VersionChange } from './change.ts';
import { clearToClose } from './changes/2026-12-07-clear-to-close.ts';
import { eventKinds } from './changes/2026-12-07-event-kinds.ts';
import { restrictedKeys } from './changes/2026-12-07-restricted-keys.ts';
import { loanEstimateEvents } from './changes/2026-12-08-loan-estimate-events.ts';
import { adverseActionEvents } from './changes/2026-12-08-adverse-action-events.ts';
import { RELEASED_VERSIONS } from './released.ts';

/** Every change, oldest version first (within a version, in the order they are undone last to first). */
export const CHANGES: readonly VersionChange[] = [clearToClose, restrictedKeys, eventKinds, loanEstimateEvents, adverseActionEvents];

/** The first version: the contract of the first release. */
export const FIRST_VERSION = '2026-11-21';

/** Every version the service serves, oldest first: the released ones and any a change module announces. */
export const VERSIONS: readonly string[] = [...new Set([FIRST_VERSION, ...RELEASED_VERSIONS, ...CHANGES.map((change) => change.version)])].sort();

/** The newest version: the contract in openapi/, which handlers and use cases speak. */
export const CURRENT_VERSION = VERSIONS[VERSIONS.length - 1]!;

/** The changes a caller on `version` must have undone, newest first. */
function changesAfter(version: string): VersionChange[] {
  return CHANGES.filter((change) => change.version > version).reverse();
}

const memo = new Map<string, VersionChange[]>();
function undone(version: string): VersionChange[] {
  let changes = memo.get(version);
  if (!changes) memo.set(version, (changes = changesAfter(version)));
  return changes;
}

/** True when `operationId`'s responses in `version` are the current ones as they are (no change to undo touches it). */
export function answersAsCurrent(operationId: string, version: string): boolean {
  return !undone(version).some((change) => change.downgradeResponse && change.touches.operations.includes(operationId));
}

/**
 * A 2xx response body of `operationId`, current shape, rendered in `version` (the body may be edited
 * in place), or ABSENT when that version has no such resource.
 */
export function renderResponse(operationId: string, body: Json, version: string): Json | typeof ABSENT {
  let rendered: Json | typeof ABSENT = body;
  for (const change of undone(version)) {
    if (!change.downgradeResponse || !change.touches.operations.includes(operationId)) continue;
    rendered = change.downgradeResponse(operationId, rendered);
    if (rendered === ABSENT) return ABSENT;
  }
  return rendered;
}

/**
 * An event's payload rendered in `version`, or null when that version has no such event. Only the
 * changes that name the kind touch it: a payload no change names is the same object, so its bytes
 * stay what they are in every version (the interface document's two events are such).
 */
export function renderEvent(type: string, payload: Json, version: string): Json | null {
  let rendered: Json | null = payload;
  for (const change of undone(version)) {
    if (!change.downgradeEvent || !change.touches.events.includes(type)) continue;
    rendered = change.downgradeEvent(type, rendered);
    if (rendered === null) return null;
  }
  return rendered;
}

/** The bytes an event is delivered as in `version`: `payload` itself unless a change names its kind; null when that version has no such event. */
export function renderEventText(type: string, payload: string, version: string): string | null {
  if (!undone(version).some((change) => change.downgradeEvent && change.touches.events.includes(type))) return payload;
  const rendered = renderEvent(type, JSON.parse(payload) as Json, version);
  return rendered === null ? null : JSON.stringify(rendered);
}

/**
 * The statuses `version` writes as others in exports, every change's rename composed (newest
 * first, as the changes are undone); null when it renames none.
 */
export function exportStatusRenames(version: string): Readonly<Record<string, string>> | null {
  const changes = undone(version).filter((change) => change.exportStatusShownAs !== undefined);
  if (changes.length === 0) return null;
  const renames: Record<string, string> = Object.create(null);
  for (const status of new Set(changes.flatMap((change) => Object.keys(change.exportStatusShownAs!)))) {
    let shown = status;
    for (const change of changes) shown = change.exportStatusShownAs![shown] ?? shown;
    if (shown !== status) renames[status] = shown;
  }
  return renames;
}

/**
 * How an export record is written in `version`, row by row: null when as the current version
 * writes it. A change that only renames statuses has its say here too (for the formats written
 * row by row); `exportNeedsRowRendering` tells whether COPY can still write the CSV.
 */
export function exportRecordRenderer(version: string): ((record: ExportSource) => ExportSource) | null {
  const changes = undone(version).filter((change) => change.downgradeExportRecord !== undefined || change.exportStatusShownAs !== undefined);
  if (changes.length === 0) return null;
  return (record) => {
    let rendered = record;
    for (const change of changes) {
      if (change.downgradeExportRecord) rendered = change.downgradeExportRecord(rendered);
      const renames = change.exportStatusShownAs;
      if (renames && Object.hasOwn(renames, rendered.status)) rendered = { ...rendered, status: renames[rendered.status] as ExportSource['status'] };
    }
    return rendered;
  };
}

/** Whether an export in `version` must be rendered row by row: some change rewrites more of a record than its status's name. */
export function exportNeedsRowRendering(version: string): boolean {
  return undone(version).some((change) => change.downgradeExportRecord !== undefined);
}

/**
 * The current statuses an export's `status` filter sent in `version` covers: the status itself,
 * unless a newer change split it (`approved` also covers what that version shows as approved) or
 * that version has no such status (none). Changes apply oldest first, as the status travels forward.
 */
export function statusFilterIn(status: string, version: string): string[] {
  let statuses = [status];
  for (const change of [...undone(version)].reverse()) {
    if (!change.upgradeStatusFilter) continue;
    statuses = statuses.flatMap((one) => change.upgradeStatusFilter!(one) ?? [one]);
  }
  return [...new Set(statuses)];
}

/** The contract (a bundle, edited in place) as `version` publishes it. */
export function downgradeSpec(spec: SpecDocument, version: string): SpecDocument {
  for (const change of changesAfter(version)) change.downgradeSpec(spec);
  const info = spec.info as { [key: string]: Json } | undefined;
  if (info) info['x-api-version'] = version;
  return spec;
}

/** The changes between `from` (older) and `to`, newest first: what an upgrade brings. */
export function changesBetween(from: string, to: string): VersionChange[] {
  return CHANGES.filter((change) => change.version > from && change.version <= to).reverse();
}
