/**
 * Every problem `code` the service can answer is listed in the contract, with its status: the
 * `x-problem-codes` of the problem responses (one list per response component, so each code sits
 * beside the status and the operations that carry it) and the table in the Problem schema's
 * `code` description, which must say the same. The codes the service can answer come from a scan
 * of src/ (test/helpers/problemCodes.ts).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { codesInSource } from '../helpers/problemCodes.ts';
import { PROJECT_ROOT } from '../helpers/server.ts';

type Json = Record<string, any>;

const published: Json = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'generated', 'openapi.json'), 'utf8'));

/** The codes each problem response of the spec lists, by status, with the operations that use it. */
function codesInSpec(): Map<string, { statuses: Set<number>; responses: Set<string> }> {
  const listed = new Map<string, { statuses: Set<number>; responses: Set<string> }>();
  for (const [pathTemplate, pathItem] of Object.entries<Json>(published.paths)) {
    for (const [method, operation] of Object.entries<Json>(pathItem)) {
      for (const [status, reference] of Object.entries<Json>(operation.responses ?? {})) {
        const name: string = typeof reference.$ref === 'string' ? (reference.$ref.split('/').pop() as string) : `${method.toUpperCase()} ${pathTemplate} ${status}`;
        const response: Json = typeof reference.$ref === 'string' ? published.components.responses[name] : reference;
        for (const code of (response['x-problem-codes'] ?? []) as string[]) {
          const entry = listed.get(code) ?? { statuses: new Set(), responses: new Set() };
          entry.statuses.add(Number(status));
          entry.responses.add(name);
          listed.set(code, entry);
        }
      }
    }
  }
  return listed;
}

/**
 * Codes answered before any operation is matched, so no operation's responses can carry them:
 * they are listed in the table of the Problem schema only.
 */
const OUTSIDE_OPERATIONS: Record<string, number> = { method_not_allowed: 405 };

function tableOfCodes(): Map<string, string> {
  const description = published.components.schemas.Problem.properties.code.description as string;
  const rows = [...description.matchAll(/^\| `([a-z0-9_]+)` \| ([\d, ]+) \|/gm)];
  return new Map(rows.map((m) => [m[1]!, m[2]!.split(',').map((s) => s.trim()).sort().join(',')]));
}

describe('problem codes', () => {
  const inSource = codesInSource();

  it('the scan of src/ finds the codes it should (a sanity check of the scanner)', () => {
    const codes = new Set(inSource.map((f) => f.code));
    for (const code of ['quote_not_found', 'last_admin_key', 'idempotency_in_progress', 'malformed_json', 'invalid_cursor', 'internal_error', 'webhook_url_invalid', 'bank_partner_unavailable']) {
      expect(codes, code).toContain(code);
    }
  });

  it('every code the service can answer is listed in x-problem-codes of a response with its status', () => {
    const listed = codesInSpec();
    const table = tableOfCodes();
    const outside = (f: { code: string; status: number }) => OUTSIDE_OPERATIONS[f.code] === f.status && table.get(f.code) === String(f.status);
    const missing = inSource
      .filter((f) => !listed.get(f.code)?.statuses.has(f.status) && !outside(f))
      .map((f) => `${f.code} (${f.status}) from ${f.where}`);
    expect([...new Set(missing)], 'add each to the x-problem-codes of the problem response for its status (openapi/components/responses/), and to the table in Problem.yaml').toEqual([]);
  });

  it('the spec lists no code the service cannot answer', () => {
    const answerable = new Set(inSource.map((f) => f.code));
    expect([...codesInSpec().keys(), ...tableOfCodes().keys()].filter((code) => !answerable.has(code))).toEqual([]);
  });

  it("the table in the Problem schema's code description lists exactly the codes and statuses of x-problem-codes", () => {
    const listed = new Map([...codesInSpec()].map(([code, entry]) => [code, [...entry.statuses].sort().join(',')]));
    for (const [code, status] of Object.entries(OUTSIDE_OPERATIONS)) listed.set(code, String(status));
    expect(Object.fromEntries(tableOfCodes())).toEqual(Object.fromEntries(listed));
  });

  it('every named problem example of a response carries a code that response lists', () => {
    const wrong: string[] = [];
    for (const [name, response] of Object.entries<Json>(published.components.responses)) {
      const codes = response['x-problem-codes'] as string[] | undefined;
      const media = response.content?.['application/problem+json'];
      if (!media) continue;
      if (!codes) {
        wrong.push(`${name} has no x-problem-codes`);
        continue;
      }
      for (const [exampleName, example] of Object.entries<Json>(media.examples ?? {})) {
        const value: Json = typeof example.$ref === 'string' ? published.components.examples[example.$ref.split('/').pop() as string].value : example.value;
        if (!codes.includes(value.code)) wrong.push(`${name} example ${exampleName} has code ${value.code}, not in its x-problem-codes`);
      }
    }
    expect(wrong).toEqual([]);
  });
});
