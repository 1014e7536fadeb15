/**
 * Patch of openapi-backend: the router's operation list built once.
 *
 * Replaces: `OpenAPIRouter.prototype.getOperations` (openapi-backend/router.js), which rebuilds the
 * list from the document with lodash on every call: twice per routed request in its own
 * matchOperation, and again in the validator's getOperation(operationId).
 *
 * Why: the document never changes after init(), so the list is the same every time. It came in
 * with the first benchmark runner (the commit "Harnesses over every operation ... and bench runner")
 * when upstream's matchOperation still ran on every request (twice per request); no figure was
 * recorded for it alone. Since the compiled matcher (routeMatcher.ts) took over routing, upstream
 * asks for the list only on an operation's first validation (getOperation) and in
 * api.getOperations(), and the matcher reads it once when it is installed.
 *
 * Checked against: openapi-backend 5.21.2 (pinned exactly in package.json).
 * test/unit/http/framework/operationList.test.ts compares the remembered list with upstream's.
 */
import type { Operation } from 'openapi-backend';

interface Router {
  getOperations(): Operation[];
}

/** Makes `router.getOperations()` answer the list it answers now, from now on. Returns that list. */
export function rememberOperations(router: Router): Operation[] {
  const operations = router.getOperations();
  router.getOperations = () => operations;
  return operations;
}
