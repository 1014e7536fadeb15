/**
 * Patch of openapi-backend: the route matcher compiled once.
 *
 * Replaces: `OpenAPIRouter.prototype.matchOperation` (openapi-backend/router.js) on the contract's
 * router instance, which builds a regular expression from every path template of the document (and
 * the operation list, twice) on every request.
 *
 * Why: that was a tenth of a simple request's CPU with forty operations (the commit "Edge: compile
 * the spec's path templates once instead of on every request"). The document never changes after
 * start, so the templates are compiled once, with the same rules: an exact path first, then
 * templates from the most specific, then the method; 404 and 405 as the router reports them (its
 * '404-notFound…' and '405-methodNotAllowed…' messages, which the contract tells apart).
 *
 * Checked against: openapi-backend 5.21.2 (pinned exactly in package.json).
 * test/unit/http/framework/routeMatcher.test.ts routes every method on every path of the spec,
 * near misses and unknown methods through both and fails on any difference.
 */
import type { Operation } from 'openapi-backend';

interface Router {
  getOperations(): Operation[];
  normalizeRequest(req: { method: string; path: string }): { method: string; path: string };
  isUnderApiRoot(path: string): boolean;
  normalizePath(path: string): string;
  matchOperation: (req: { method: string; path: string }, strict?: boolean) => Operation | undefined;
}

const escapeRegExp = (literal: string) => literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export function installCompiledMatcher(router: Router): void {
  const operations = router.getOperations();
  const exact = new Map<string, Operation[]>();
  for (const operation of operations) exact.set(operation.path, [...(exact.get(operation.path) ?? []), operation]);
  const templates = operations
    .map((operation) => ({
      operation,
      pattern: new RegExp(`^${operation.path.replace(/\{[^}]+\}/g, '\0').split('\0').map(escapeRegExp).join('[^/]+')}$`),
      specificity: operation.path.replace(/\{.*?\}/g, '').length,
    }))
    // Stable sort: the router orders template matches by specificity, most specific first.
    .sort((a, b) => b.specificity - a.specificity);

  router.matchOperation = (request, strict) => {
    const req = router.normalizeRequest(request);
    const fail = (message: string) => {
      if (strict) throw new Error(message);
      return undefined;
    };
    if (!router.isUnderApiRoot(req.path)) return fail('404-notFound: no route matches request');
    const path = router.normalizePath(req.path);
    const exactMatch = exact.get(path)?.find((operation) => operation.method === req.method);
    if (exactMatch) return exactMatch;
    const matches = templates.filter((template) => template.pattern.test(path));
    if (matches.length === 0) return fail('404-notFound: no route matches request');
    const match = matches.find((template) => template.operation.method === req.method);
    return match ? match.operation : fail('405-methodNotAllowed: this method is not registered for the route');
  };
}
