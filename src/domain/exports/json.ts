/**
 * Export records as JSON text, written directly from the rows (no intermediate objects): the
 * `json` format streams `{"data":[` record `,` record … `]}` and `ndjson` one record a line.
 * Objects keep the record's canonical key order whatever order `fields` named them in; a null
 * parent (`bankVerification`) is written as `null`.
 */
import { centsToDecimal } from './amounts.ts';
import { EXPORT_FIELDS, parentIsNull, type ExportSource, type FieldDefinition } from './fields.ts';

type Part = (row: ExportSource) => string;

function valueWriter(field: FieldDefinition): Part {
  const get = field.get;
  switch (field.kind) {
    case 'money':
      return (row) => {
        const cents = get(row) as number | null;
        return cents === null ? 'null' : centsToDecimal(cents);
      };
    case 'integer':
    case 'boolean':
      return (row) => {
        const value = get(row);
        return value === null ? 'null' : String(value);
      };
    case 'text':
    case 'timestamp':
      return (row) => {
        const value = get(row);
        return value === null ? 'null' : JSON.stringify(value);
      };
  }
}

function joinParts(parts: Part[]): Part {
  return (row) => {
    let out = '';
    for (let i = 0; i < parts.length; i++) out += (i === 0 ? '' : ',') + parts[i]!(row);
    return out;
  };
}

/** A function that writes one row as a JSON object holding the selected fields. */
export function jsonRecordWriter(selected: readonly FieldDefinition[]): (row: ExportSource) => string {
  const chosen = new Set(selected.map((field) => field.name));
  const parts: Part[] = [];
  let i = 0;
  while (i < EXPORT_FIELDS.length) {
    const field = EXPORT_FIELDS[i]!;
    const parent = field.parent;
    if (parent === null) {
      if (chosen.has(field.name)) {
        const prefix = JSON.stringify(field.key) + ':';
        const value = valueWriter(field);
        parts.push((row) => prefix + value(row));
      }
      i++;
      continue;
    }
    const children: Part[] = [];
    for (; i < EXPORT_FIELDS.length && EXPORT_FIELDS[i]!.parent === parent; i++) {
      const child = EXPORT_FIELDS[i]!;
      if (!chosen.has(child.name)) continue;
      const prefix = JSON.stringify(child.key) + ':';
      const value = valueWriter(child);
      children.push((row) => prefix + value(row));
    }
    if (children.length === 0) continue;
    const open = JSON.stringify(parent) + ':{';
    const nullValue = JSON.stringify(parent) + ':null';
    const body = joinParts(children);
    parts.push((row) => (parentIsNull(parent, row) ? nullValue : open + body(row) + '}'));
  }
  const body = joinParts(parts);
  return (row) => '{' + body(row) + '}';
}
