/**
 * Fails when an operation of the contract lacks a valid `x-required-scope` (`<family>:<read|write>`
 * or `none`), when an operation that takes no API key asks for a scope, when one that needs a
 * scope declares no 403 response, when one that needs the admin role (`x-required-role: admin`)
 * needs a scope that an operation open to member keys needs too, when an operation answering with
 * applicants' demographic data (`x-demographic-data: true`) does not need the admin role, or when the ApiKeyScopes
 * schema and the scope families of src/domain/accounts/scopes.ts disagree; and when an operation
 * declares `x-read-replica` other than `true` on a GET (its reads may go to a streaming replica:
 * only an operation that changes nothing may read stale data). Reads the bundle
 * (generated/openapi.json, or the file named as the first argument), which check:generated holds
 * to openapi/.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { scopeDeclarationIssues, type DeclaredOperation } from '../src/domain/accounts/scopes.ts';

type Json = Record<string, any>;

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const file = process.argv[2] ?? path.join(root, 'generated', 'openapi.json');
const spec: Json = JSON.parse(readFileSync(file, 'utf8'));
const METHODS = ['get', 'put', 'post', 'patch', 'delete'];

const operations: DeclaredOperation[] = [];
const replicaIssues: string[] = [];
let replicaReads = 0;
for (const [pathTemplate, item] of Object.entries<Json>(spec.paths ?? {})) {
  for (const method of METHODS) {
    const operation: Json | undefined = item[method];
    if (!operation) continue;
    const security: Json[] = operation.security ?? spec.security ?? [];
    const readReplica = operation['x-read-replica'];
    if (readReplica !== undefined) {
      if (readReplica !== true) replicaIssues.push(`${method.toUpperCase()} ${pathTemplate} (${operation.operationId}): x-read-replica must be true when present, got ${JSON.stringify(readReplica)}`);
      else if (method !== 'get') replicaIssues.push(`${method.toUpperCase()} ${pathTemplate} (${operation.operationId}): x-read-replica on an operation that is not a GET (it may write)`);
      else replicaReads++;
    }
    operations.push({
      where: `${method.toUpperCase()} ${pathTemplate} (${operation.operationId})`,
      requiredScope: operation['x-required-scope'],
      requiredRole: operation['x-required-role'],
      schemes: security.flatMap((requirement) => Object.keys(requirement)),
      statuses: Object.keys(operation.responses ?? {}),
      demographicData: operation['x-demographic-data'],
    });
  }
}
const families = Object.keys(spec.components?.schemas?.ApiKeyScopes?.properties ?? {});
const issues = scopeDeclarationIssues(operations, families);
if (issues.length > 0) {
  console.error(`x-required-scope: ${issues.length} problem(s)\n${issues.map((issue) => `- ${issue}`).join('\n')}`);
  process.exitCode = 1;
} else {
  console.log(`x-required-scope: all ${operations.length} operations declare a valid scope`);
}
if (replicaIssues.length > 0) {
  console.error(`x-read-replica: ${replicaIssues.length} problem(s)\n${replicaIssues.map((issue) => `- ${issue}`).join('\n')}`);
  process.exitCode = 1;
} else {
  console.log(`x-read-replica: ${replicaReads} GET operations may read from a replica`);
}
