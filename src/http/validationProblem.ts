/**
 * Turns Ajv's errors (as openapi-backend reports them) into the problem's `errors[]`: one entry
 * per offending place, with a JSON Pointer a caller can map back to its own field.
 */
import type { ErrorObject } from 'ajv';
import { textRuleMessage } from '../domain/text/textRule.ts';
import { MAX_VALIDATION_ERRORS, TRUNCATED_KEYWORD } from './framework/boundedValidation.ts';
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
  if (error.keyword === 'pattern') {
    const textRule = textRuleMessage(String((error.params as { pattern?: unknown }).pattern));
    if (textRule) return textRule;
  }
  if (error.keyword === 'parse') return `is not valid JSON: ${error.message ?? ''}`.trim();
  const unit = (error.parentSchema as { 'x-unit'?: string } | undefined)?.['x-unit'];
  const message = error.message ?? 'is not valid';
  return unit ? `${message} (${unit})` : message;
}

/** A pointer or message longer than this (a 100,000-character key name) is cut, so a problem stays small. */
const MAX_TEXT = 200;
const cut = (text: string) => (text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}…` : text);

/**
 * The issues Ajv's errors stand for, one per offending place, deduplicated and bounded; `truncated`
 * when some were left out. The API's 400 and the dashboard's field messages both come from here.
 */
export function validationIssues(errors: ErrorObject[]): { issues: ValidationIssue[]; truncated: boolean } {
  const issues: ValidationIssue[] = [];
  const seen = new Set<string>();
  let truncated = false;
  for (const error of errors) {
    if (error.keyword === TRUNCATED_KEYWORD) {
      truncated = true;
      continue;
    }
    // `anyOf`/`oneOf` wrappers repeat what their branches said.
    if (error.keyword === 'anyOf' || error.keyword === 'oneOf' || error.keyword === 'if') continue;
    if (issues.length >= MAX_VALIDATION_ERRORS) {
      truncated = true;
      break;
    }
    const issue = { pointer: cut(pointerOf(error)), message: cut(messageOf(error)) };
    const key = `${issue.pointer} ${issue.message}`;
    if (!seen.has(key)) {
      seen.add(key);
      issues.push(issue);
    }
  }
  return { issues, truncated };
}

export function validationProblem(errors: ErrorObject[]): ApiProblem {
  const { issues, truncated } = validationIssues(errors);
  const first = issues[0];
  const detail = first
    ? `${first.pointer === '/' ? 'The request body' : first.pointer} ${first.message}` +
      (truncated ? ` (and more; the first ${issues.length} problems are listed)` : issues.length > 1 ? ` (and ${issues.length - 1} more)` : '')
    : 'The request does not match the contract.';
  const problem = problems.validation(detail, issues);
  if (truncated) problem.extras.errorsTruncated = true;
  return problem;
}
