/**
 * The operator's bank partner commands (`npm run admin -- bank-partner …`), spread into
 * adminCommands. They need the configuration (the bank secret, the partner allow-list, the
 * sandbox token lifetime): it comes with the context, in the server and in the CLI process alike.
 */
import {
  allowPartnerAccount,
  createBankPartner,
  disallowPartnerAccount,
  issueSandboxToken,
  listPartners,
  setPartnerCredential,
  setPartnerDisabled,
  unrestrictPartner,
  type PartnerView,
} from '../services/bankPartners.ts';
import type { AdminCommand } from './command.ts';

const PARTNER = { required: true, description: 'the partner id (bnk-…)' } as const;
const ACCOUNT = { required: true, description: 'the account id (acc-…)' } as const;

const shown = (p: PartnerView): Record<string, unknown> => ({ ...p });

export const bankPartnerCommands: Record<string, AdminCommand> = {
  'bank-partner create': {
    description: 'Register a bank partner. It serves every account until restricted with allow-account.',
    flags: {
      name: { required: true, description: 'the bank, e.g. "First Harbor Bank"' },
      connector: { required: true, description: 'sandbox (built in, test tokens) or http (the partner API)' },
      'base-url': { description: 'http only: the partner API, https (e.g. https://api.bank.example/verification/)' },
      credential: { description: 'http only: the bearer credential the service presents to the partner API' },
    },
    async run(ctx, flags) {
      const partner = await createBankPartner(ctx, {
        name: flags.name!,
        connector: flags.connector!,
        baseUrl: flags['base-url'],
        credential: flags.credential,
      });
      return { partnerId: partner.partnerId, connector: partner.connector, tokenPrefix: partner.tokenPrefix };
    },
  },
  'bank-partner list': {
    description: 'List bank partners (never their credentials).',
    flags: {},
    async run(ctx) {
      return { partners: await listPartners(ctx) };
    },
  },
  'bank-partner sandbox-token': {
    description: 'Mint a sandbox bank token for a holder and account number (expires after BANK_SANDBOX_TOKEN_TTL_SECONDS).',
    flags: {
      partner: PARTNER,
      holder: { required: true, description: 'the account holder\'s name, e.g. "Jane Doe"' },
      'account-number': { required: true, description: 'the account number, 4 to 34 digits or letters' },
    },
    async run(ctx, flags) {
      return issueSandboxToken(ctx, { partnerId: flags.partner!, holder: flags.holder!, accountNumber: flags['account-number']! });
    },
  },
  'bank-partner allow-account': {
    description: 'Restrict a partner to the accounts allowed so far, adding this one.',
    flags: { partner: PARTNER, account: ACCOUNT },
    async run(ctx, flags) {
      return shown(await allowPartnerAccount(ctx, flags.partner!, flags.account!));
    },
  },
  'bank-partner disallow-account': {
    description: 'Remove an account from a restricted partner.',
    flags: { partner: PARTNER, account: ACCOUNT },
    async run(ctx, flags) {
      return shown(await disallowPartnerAccount(ctx, flags.partner!, flags.account!));
    },
  },
  'bank-partner unrestrict': {
    description: 'Let a partner serve every account again.',
    flags: { partner: PARTNER },
    async run(ctx, flags) {
      return shown(await unrestrictPartner(ctx, flags.partner!));
    },
  },
  'bank-partner disable': {
    description: "Refuse a partner's tokens (401) until it is enabled again.",
    flags: { partner: PARTNER },
    async run(ctx, flags) {
      return shown(await setPartnerDisabled(ctx, flags.partner!, true));
    },
  },
  'bank-partner enable': {
    description: 'Accept a disabled partner\'s tokens again.',
    flags: { partner: PARTNER },
    async run(ctx, flags) {
      return shown(await setPartnerDisabled(ctx, flags.partner!, false));
    },
  },
  'bank-partner set-credential': {
    description: 'Replace the credential the service presents to an http partner (stored encrypted).',
    flags: { partner: PARTNER, credential: { required: true, description: 'the bearer credential the partner issued to the service' } },
    async run(ctx, flags) {
      return shown(await setPartnerCredential(ctx, flags.partner!, flags.credential!));
    },
  },
  'bank-partner clear-credential': {
    description: 'Remove the credential of an http partner.',
    flags: { partner: PARTNER },
    async run(ctx, flags) {
      return shown(await setPartnerCredential(ctx, flags.partner!, null));
    },
  },
};
