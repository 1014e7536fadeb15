/**
 * Turns Ajv's errors (as openapi-backend reports them) into the problem's `errors[]`: one entry
 * per offending place, with a JSON Pointer a caller can map back to its own field.
 */
import type { ErrorObject } from 'ajv';
import { problems, type ApiProblem, type ValidationIssue } from './problem.ts';

const LOCATIONS: Record<string, string> = {
  requestBody: '',
  query: '#/query',
  path: '#/path',
  header: '#/header',
  cookie: '#/cookie',
};

function pointerOf(error: ErrorObject): string {
  const [, location = '', ...rest] = error.instancePath.split('/');
  let segments = rest;
  // `required` and `additionalProperties` name the property in params, not in the path.
  const params = error.params as { missingProperty?: string; additionalProperty?: string };
  const named = params.missingProperty ?? params.additionalProperty;
  if (named !== undefined) segments = [...segments, named];
  if (location === 'requestBody' || location === '') return '/' + segments.join('/');
  const prefix = LOCATIONS[location] ?? `#/${location}`;
  return segments.length ? `${prefix}/${segments.join('/')}` : prefix;
}

function messageOf(error: ErrorObject): string {
  const params = error.params as { additionalProperty?: string; allowedValues?: unknown[] };
  if (error.keyword === 'additionalProperties') return `is not a known field`;
  if (error.keyword === 'required' && error.instancePath === '') return 'a request body is required';
  if (error.keyword === 'required') return 'is required';
  if (error.keyword === 'enum' && params.allowedValues) {
    return `must be one of: ${params.allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
  }
  if (error.keyword === 'parse') return `is not valid JSON: ${error.message ?? ''}`.trim();
  const unit = (error.parentSchema as { 'x-unit'?: string } | undefined)?.['x-unit'];
  const message = error.message ?? 'is not valid';
  return unit ? `${message} (${unit})` : message;
}

export function validationProblem(errors: ErrorObject[]): ApiProblem {
  const issues: ValidationIssue[] = [];
  const seen = new Set<string>();
  for (const error of errors) {
    // `anyOf`/`oneOf` wrappers repeat what their branches said.
    if (error.keyword === 'anyOf' || error.keyword === 'oneOf' || error.keyword === 'if') continue;
    const issue = { pointer: pointerOf(error), message: messageOf(error) };
    const key = `${issue.pointer} ${issue.message}`;
    if (!seen.has(key)) {
      seen.add(key);
      issues.push(issue);
    }
  }
  const first = issues[0];
  const detail = first
    ? `${first.pointer === '/' ? 'The request body' : first.pointer} ${first.message}` + (issues.length > 1 ? ` (and ${issues.length - 1} more)` : '')
    : 'The request does not match the contract.';
  return problems.validation(detail, issues);
}
