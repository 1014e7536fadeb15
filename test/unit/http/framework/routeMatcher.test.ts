import { readFileSync } from 'node:fs';
import { OpenAPIRouter, type Document } from 'openapi-backend';
import { describe, expect, it } from 'vitest';
import { installCompiledMatcher } from '../../../../src/http/framework/routeMatcher.ts';

const definition = JSON.parse(readFileSync(new URL('../../../../generated/openapi.json', import.meta.url), 'utf8')) as Document;
/** Every method the spec uses, methods it never declares, and a method as a client may spell it. */
const METHODS = ['get', 'put', 'post', 'patch', 'delete', 'head', 'options', 'trace', 'GET', ' Post '];

/** What a router answers for a request, strict (the error it raises) and not (undefined). */
function outcome(router: OpenAPIRouter, method: string, path: string): string {
  const lenient = router.matchOperation({ method, path, headers: {} }, false)?.operationId ?? 'undefined';
  try {
    return `${router.matchOperation({ method, path, headers: {} }, true)?.operationId ?? 'undefined'} / ${lenient}`;
  } catch (err) {
    return `${(err as Error).message} / ${lenient}`;
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
    paths.push('/', '', 'v1/quotes', '/v1', '/v1/', '/v1/unknown', '/v1/applications/a/b/c/d', '/v1/quotes?x=1', '//v1/quotes', '/v1//quotes', ' /v1/quotes ');
    let compared = 0;
    for (const path of paths) {
      for (const method of METHODS) {
        expect(outcome(compiled, method, path), `${method} ${path}`).toBe(outcome(original, method, path));
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(300);
  });
});
