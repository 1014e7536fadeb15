/** Audited changes for the audit chain's tests: API keys made one after another, the clock a second apart between them. */
import { expect } from 'vitest';
import type { TestAccount } from './testApp.ts';

export async function someChanges(account: TestAccount, clock: { advance(ms: number): void }, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    clock.advance(1_000);
    const { response } = await account.client.POST('/v1/api-keys', { body: { name: `Key ${i}`, role: 'member' } });
    expect(response.status).toBe(201);
  }
}
