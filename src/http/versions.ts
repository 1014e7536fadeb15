/**
 * API versions at the edge: the version a request is answered in (its `Mos-Version` header, else
 * the account's pinned version, else the current one), the header on every response, and the
 * handler's result rendered in that version by the change modules (src/domain/versions/), after
 * the handler and before the response is written, kept for replay, or validated by a test.
 */
import type { Context } from 'koa';
import type { ApiKeyPrincipal } from '../contract/principals.ts';
import { ABSENT, type Json } from '../domain/versions/change.ts';
import { chooseVersion } from '../domain/versions/header.ts';
import { answersAsCurrent, CURRENT_VERSION, renderResponse, VERSIONS } from '../domain/versions/registry.ts';
import { ApiProblem, problems } from './problem.ts';

/** The version the request's `Mos-Version` asks for, or undefined without one; a bad one is a 400 that changes nothing. */
export function askedVersion(koa: Context, now: Date): string | undefined {
  const header = koa.req.headersDistinct['mos-version'];
  if (header === undefined) return undefined;
  const choice = chooseVersion(header.length === 1 ? header[0]! : header, VERSIONS, now.toISOString().slice(0, 10));
  if ('version' in choice) return choice.version;
  throw new ApiProblem(400, 'api_version_invalid', 'The API version is not valid', `${choice.refused} Supported versions: ${VERSIONS.join(', ')}.`, {
    supportedVersions: [...VERSIONS],
  });
}

/** Settles the request's version (after authentication: the key's account gives the default) and says it in the response. */
export function apiVersionOf(koa: Context, asked: string | undefined): string {
  const version = asked ?? (koa.state.principal as ApiKeyPrincipal | undefined)?.apiVersion ?? CURRENT_VERSION;
  koa.state.apiVersion = version;
  koa.set('Mos-Version', version);
  return version;
}

/** A handler's result in the request's version: a 2xx JSON body goes through the change modules newer than it. */
export function renderedResult<R extends { status: number; body?: unknown }>(operationId: string, result: R, koa: Context): R {
  const version = koa.state.apiVersion as string | undefined;
  if (version === undefined || answersAsCurrent(operationId, version) || 'raw' in result || result.body === undefined || result.status >= 300) return result;
  // The change modules copy what they change (a handler may hand back an object it keeps).
  const rendered = renderResponse(operationId, result.body as Json, version);
  if (rendered === ABSENT) throw problems.notFound(`There is no such resource in API version ${version}.`);
  return { ...result, body: rendered };
}
