/**
 * How the cross-operation harnesses (auth matrix, bad input) get a real resource for each path
 * parameter of the spec. Every path parameter name used in openapi/paths must have a factory
 * here; the auth matrix fails, naming the parameter, when one is missing.
 *
 * A factory creates the resource in `owner`'s account through the API and returns its id. It
 * receives the ids already made for the parameters before it in the same path (for example
 * `mortgageId` before `documentId`).
 */
import type { TestAccount, TestApp } from './testApp.ts';

export type ResourceFactory = (app: TestApp, owner: TestAccount, earlier: Record<string, string>) => Promise<string>;

export const resourceFactories: Record<string, ResourceFactory> = {
  async keyId(_app, owner) {
    const { data } = await owner.client.POST('/v1/api-keys', { body: { role: 'member', name: 'Matrix key' } });
    return data!.keyId;
  },
};
