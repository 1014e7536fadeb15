/**
 * @mortgage-origination/sdk: a typed client for the Mortgage Origination API.
 *
 *   const client = createMortgageClient({ baseUrl: 'https://…', apiKey: process.env.API_KEY! });
 *   const { data: quote } = await client.api.POST('/v1/quotes', { body: { amount: 350000, term: 30 } });
 */
export { API_VERSION } from './version.ts';
export { createMortgageClient, type ExportDownload, type ExportQuery, type ExportRecord, type ListInit, type ListItem, type ListPath, type MortgageClient, type MortgageClientOptions, type Schemas } from './client.ts';
export { isProblemError, ProblemError, type Problem, type ProblemCode } from './errors.ts';
export { PROBLEM_CODES, type KnownProblemCode } from './generated/problemCodes.ts';
export { backoffMs, resilientFetch, retryAfterMs, RETRIED_STATUSES, type RetryOptions } from './retry.ts';
export { verifyWebhook, WebhookVerificationError, type ReleasedApiVersion, type VerifyWebhookOptions, type WebhookEvent, type WebhookEventIn, type WebhookEventType } from './webhooks.ts';
export { EVENT_KINDS_BY_VERSION, type ApiVersionTypes } from './generated/versions.ts';
export type { components, operations, paths, webhooks } from './generated/api.ts';
