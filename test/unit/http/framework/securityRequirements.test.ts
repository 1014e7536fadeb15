/**
 * securityRequirements against openapi-backend's own handleRequest: for operations with one scheme,
 * two schemes in one requirement, alternative requirements, no requirement and a scheme with no
 * handler, and handlers that succeed, answer something falsy, answer an object carrying an error,
 * reject with a reason or without one, the results (each scheme's, and `authorized`) are the same.
 */
import { OpenAPIBackend, type Context, type Document, type Operation } from 'openapi-backend';
import { describe, expect, it } from 'vitest';
import { securityRequirements, type SchemeHandler } from '../../../../src/http/framework/securityRequirements.ts';

const REQUIREMENTS: Record<string, Array<Record<string, string[]>>> = {
  one: [{ a: [] }],
  both: [{ a: [], b: [] }],
  either: [{ a: [] }, { b: [] }],
  eitherPair: [{ a: [], b: [] }, { c: [] }],
  none: [],
  anonymousAllowed: [{}, { a: [] }],
  unhandled: [{ missing: [] }],
};

const definition: Document = {
  openapi: '3.0.3',
  info: { title: 'security', version: '1' },
  paths: Object.fromEntries(
    Object.entries(REQUIREMENTS).map(([operationId, security]) => [
      `/${operationId}`,
      { get: { operationId, security, responses: { 200: { description: 'ok' } } } },
    ]),
  ),
};

/** What a handler does, by name. */
const BEHAVIOURS: Record<string, () => unknown> = {
  succeeds: () => ({ principal: 'p' }),
  answersTrue: () => true,
  answersFalsy: () => 0,
  answersUndefined: () => undefined,
  answersAnError: () => ({ error: new Error('refused'), user: 'x' }),
  answersANullError: () => ({ error: null, user: 'x' }),
  rejects: () => Promise.reject(new Error('refused')),
  rejectsWithoutReason: () => Promise.reject(null),
  throws: () => {
    throw new Error('thrown');
  },
};

/** Error objects compared by message (the fallback one is made afresh on each side). */
function comparable(security: Record<string, unknown>): unknown {
  return JSON.parse(JSON.stringify(security, (_, value) => (value instanceof Error ? { error: value.message } : value)));
}

describe("securityRequirements against openapi-backend's handleRequest", () => {
  it('records the same results and the same verdict for every combination', async () => {
    const names = Object.keys(BEHAVIOURS);
    let compared = 0;
    for (const a of names) {
      for (const b of names) {
        for (const c of ['succeeds', 'rejects']) {
          const behaviour = { a: BEHAVIOURS[a]!, b: BEHAVIOURS[b]!, c: BEHAVIOURS[c]! };
          const upstream = new OpenAPIBackend({ definition: structuredClone(definition), quick: true, validate: false });
          for (const [name, handler] of Object.entries(behaviour)) upstream.registerSecurityHandler(name, handler as never);
          const seen = new Map<string, unknown>();
          for (const operationId of Object.keys(REQUIREMENTS)) upstream.register(operationId, (context: Context) => seen.set(operationId, context.security));
          upstream.register('unauthorizedHandler', (context: Context) => seen.set(context.operation.operationId!, context.security));
          await upstream.init();

          const mine = securityRequirements(new Map<string, SchemeHandler<null>>(Object.entries(behaviour)));
          for (const operation of upstream.getOperations() as Operation[]) {
            await upstream.handleRequest({ method: 'GET', path: operation.path, headers: {} });
            const theirs = seen.get(operation.operationId!) as Record<string, unknown>;
            expect(comparable(await mine(operation, null)), `${operation.operationId}: a ${a}, b ${b}, c ${c}`).toEqual(comparable(theirs));
            compared++;
          }
        }
      }
    }
    expect(compared).toBe(names.length * names.length * 2 * Object.keys(REQUIREMENTS).length);
  });
});
