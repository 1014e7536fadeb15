/**
 * The connector of a registered partner: the built-in sandbox, or the partner's own API.
 */
import type { AppContext } from '../context.ts';
import type { BankPartnerRecord } from '../store/bankPartners.ts';
import type { BankConnector } from './connector.ts';
import { BankPartnerUnavailable } from './connector.ts';
import { openCredential } from './credentials.ts';
import { HttpConnector } from './httpConnector.ts';
import { testBankAccount } from '../contract/testValues.ts';
import { SandboxConnector, TEST_MODE_PARTNER_ID } from './sandbox.ts';
import { bankKeys } from './secrets.ts';

export async function connectorFor(partner: BankPartnerRecord, ctx: AppContext): Promise<BankConnector> {
  const keys = await bankKeys(ctx.config);
  if (partner.connector === 'sandbox') {
    const testAccounts = partner.partnerId === TEST_MODE_PARTNER_ID ? testBankAccount : null;
    return new SandboxConnector(keys.sandboxToken, partner.partnerId, ctx.clock, testAccounts);
  }
  if (!partner.baseUrl) throw new BankPartnerUnavailable('the partner has no base URL');
  let credential: string | null = null;
  if (partner.credentialSealed) {
    try {
      credential = openCredential(keys.partnerCredential, partner.partnerId, partner.credentialSealed);
    } catch {
      throw new BankPartnerUnavailable("the partner's stored credential does not open with this server's secret; set it again");
    }
  }
  return new HttpConnector({ partnerId: partner.partnerId, baseUrl: partner.baseUrl, credential }, ctx.config.bank, ctx.clock, ctx.log, ctx);
}
