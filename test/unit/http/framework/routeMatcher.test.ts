import { readFileSync } from 'node:fs';
import { OpenAPIRouter, type Document } from 'openapi-backend';
import { describe, expect, it } from 'vitest';
import { installCompiledMatcher } from '../../../../src/http/framework/routeMatcher.ts';

const definition = JSON.parse(readFileSync(new URL('../../../../generated/openapi.json', import.meta.url), 'utf8')) as Document;
const METHODS = ['get', 'put', 'post', 'patch', 'delete'];

/** What a router answers for a request: the operationId, or the error it raises. */
function outcome(router: OpenAPIRouter, method: string, path: string): string {
  try {
    return router.matchOperation({ method, path, headers: {} }, true)?.operationId ?? 'undefined';
  } catch (err) {
    return (err as Error).message;
  }
}

describe('installCompiledMatcher', () => {
  it("routes every method on every path of the spec (and near misses) exactly as openapi-backend's router does", () => {
    const original = new OpenAPIRouter({ definition });
    const compiled = new OpenAPIRouter({ definition });
    installCompiledMatcher(compiled as never);
    const paths = Object.keys(definition.paths ?? {}).flatMap((template) => {
      const concrete = template.replace(/\{[^}]+\}/g, 'x-01jdz8k3n4q2v6x9b7c5t1r0aa');
      return [concrete, `${concrete}/`, `${concrete}/extra`, concrete.replace('/v1/', '/v2/')];
    });
    paths.push('/', '/v1', '/v1/unknown', '/v1/applications/a/b/c/d');
    let compared = 0;
    for (const path of paths) {
      for (const method of METHODS) {
        expect(outcome(compiled, method, path), `${method} ${path}`).toBe(outcome(original, method, path));
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(150);
  });
});
