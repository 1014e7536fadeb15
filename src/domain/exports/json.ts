/**
 * Export records as JSON text, written directly from the rows (no intermediate objects): the
 * `json` format streams `{"data":[` record `,` record … `]}` and `ndjson` one record a line.
 * Objects keep the record's canonical key order whatever order `fields` named them in; a null
 * parent (`bankVerification`) is written as `null`.
 */
import { centsToDecimal } from './amounts.ts';
import { EXPORT_FIELDS, fieldValue, parentIsNull, type ExportSource, type FieldDefinition } from './fields.ts';

/** How a step writes its value (or what it opens or closes). */
const MONEY = 0;
const LITERAL = 1;
const STRING = 2;
const OPEN = 3;
const CLOSE = 4;

/**
 * A JSON text's characters JSON.stringify escapes: the quote, the backslash, control characters
 * and (well-formed JSON.stringify) lone surrogates, any surrogate here. A string without them is
 * written between quotes as it is, which is what JSON.stringify writes for it.
 */
const NEEDS_ESCAPING = /["\\\u0000-\u001F\uD800-\uDFFF]/;

/** One step of writing a record: a field's key and value, or a parent object's opening or closing. */
interface Step {
  kind: number;
  /** What comes before the value: the comma unless first, the key and colon; for OPEN also the `{`. */
  prefix: string;
  /** The field's index in the catalogue (fieldValue); -1 for OPEN and CLOSE. */
  field: number;
  /** OPEN: the parent whose null-ness decides, what is written instead when it is null, and how many steps that replaces. */
  parent: FieldDefinition['parent'];
  nullText: string;
  skip: number;
}

function step(kind: number, prefix: string, field = -1, parent: FieldDefinition['parent'] = null, nullText = '', skip = 0): Step {
  return { kind, prefix, field, parent, nullText, skip };
}

function valueKind(field: FieldDefinition): number {
  switch (field.kind) {
    case 'money':
      return MONEY;
    case 'integer':
    case 'boolean':
      return LITERAL;
    case 'text':
    case 'timestamp':
      return STRING;
  }
}

/**
 * Writes rows as JSON objects holding the selected fields. The layout is decided once, as a list
 * of steps, so a record is one loop with a switch: no call through a function per field (V8
 * cannot inline those), and JSON.stringify only for the rare string that needs escaping.
 */
export class JsonRecords {
  private readonly steps: readonly Step[];

  constructor(selected: readonly FieldDefinition[]) {
    const chosen = new Set(selected.map((field) => field.name));
    const steps: Step[] = [];
    const comma = () => (steps.length === 0 ? '' : ',');
    let i = 0;
    while (i < EXPORT_FIELDS.length) {
      const field = EXPORT_FIELDS[i]!;
      const parent = field.parent;
      if (parent === null) {
        if (chosen.has(field.name)) steps.push(step(valueKind(field), comma() + JSON.stringify(field.key) + ':', field.index));
        i++;
        continue;
      }
      const children: FieldDefinition[] = [];
      for (; i < EXPORT_FIELDS.length && EXPORT_FIELDS[i]!.parent === parent; i++) {
        if (chosen.has(EXPORT_FIELDS[i]!.name)) children.push(EXPORT_FIELDS[i]!);
      }
      if (children.length === 0) continue;
      const key = comma() + JSON.stringify(parent) + ':';
      steps.push(step(OPEN, key + '{', -1, parent, key + 'null', children.length + 1));
      children.forEach((child, c) => steps.push(step(valueKind(child), (c === 0 ? '' : ',') + JSON.stringify(child.key) + ':', child.index)));
      steps.push(step(CLOSE, '}'));
    }
    this.steps = steps;
  }

  /** `out` followed by the record of `row`. */
  append(out: string, row: ExportSource): string {
    const steps = this.steps;
    out += '{';
    for (let s = 0; s < steps.length; s++) {
      const current = steps[s]!;
      switch (current.kind) {
        case OPEN:
          if (parentIsNull(current.parent, row)) {
            out += current.nullText;
            s += current.skip;
          } else {
            out += current.prefix;
          }
          break;
        case CLOSE:
          out += current.prefix;
          break;
        default: {
          const value = fieldValue(row, current.field);
          out += current.prefix;
          if (value === null) out += 'null';
          else if (current.kind === MONEY) out += centsToDecimal(value as number);
          else if (current.kind === LITERAL) out += String(value);
          else out += NEEDS_ESCAPING.test(value as string) ? JSON.stringify(value) : '"' + (value as string) + '"';
        }
      }
    }
    return out + '}';
  }
}
