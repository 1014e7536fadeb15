/**
 * Settings (admins): the rate sheet and the underwriting rules, viewed and edited whole, with the
 * API's validation messages (the contract's 400 and the use case's 422, both with pointers) shown
 * beside the fields they are about.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { AppContext } from '../../context.ts';
import type { RateSheet } from '../../domain/pricing/rateSheet.ts';
import type { UnderwritingRules } from '../../domain/underwriting/rules.ts';
import { getUnderwritingRules, setUnderwritingRules } from '../../services/underwriting.ts';
import { getPricingSettings, setRateSheet } from '../../services/pricing.ts';
import { decodeForm } from '../forms.ts';
import { actingAs, accountOf, fieldValues, formErrors, formOf, redirect, requireRoleFor, submittedValues } from '../page.ts';
import { render } from '../render.ts';
import { contractIssues, requestSchema } from '../validation.ts';
import { fail } from '../../errors.ts';
import { accountApiVersion } from '../../services/apiVersions.ts';
import { API_VERSION_DONE, apiVersionRoutes } from './apiVersion.ts';
import { LENDER_DONE, lenderRoutes, lenderValues, type LenderFormState } from './lender.ts';
import { getLender } from '../../services/lender.ts';

const DONE: Record<string, string> = {
  pricing: 'The rate sheet is saved: new quotes are priced from it.',
  underwriting: 'The underwriting rules are saved: submissions from now on are decided by them.',
  ...API_VERSION_DONE,
  ...LENDER_DONE,
};

/** The array tables of the rate sheet form and the blank rows each offers for additions. */
const RATE_SHEET_TABLES = ['baseRates', 'ltvAdjustments', 'creditScoreAdjustments', 'flatFees'] as const;
const BLANK_ROWS = 2;

/** How many rows the form shows for each table: the rows the values have, plus blank rows to add. */
function rowCounts(values: Record<string, string>, blank: number): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const table of RATE_SHEET_TABLES) {
    let rows = 0;
    for (const name of Object.keys(values)) {
      const m = new RegExp(`^/${table}/(\\d+)/`).exec(name);
      if (m) rows = Math.max(rows, Number(m[1]) + 1);
    }
    counts[table] = rows + blank;
  }
  return counts;
}

interface SettingsForms {
  pricing?: { values: Record<string, string>; errors: Record<string, string>; message: string | null; blank: number };
  underwriting?: { values: Record<string, string>; errors: Record<string, string>; message: string | null };
  lender?: LenderFormState;
}

async function settingsPage(koa: Context, ctx: AppContext, forms: SettingsForms = {}, status = 200): Promise<void> {
  const session = requireRoleFor(koa, 'getPricing', 'getUnderwritingRules');
  const accountId = accountOf(session);
  const pricing = await getPricingSettings(ctx, accountId);
  const rules = await getUnderwritingRules(ctx, accountId);
  const { updatedAt: rulesUpdatedAt, ...ruleValues } = rules;
  const pricingForm = forms.pricing ?? { values: fieldValues(pricing.rateSheet), errors: {}, message: null, blank: BLANK_ROWS };
  render(
    koa,
    'settings',
    {
      title: 'Settings',
      nav: 'settings',
      pricing: { ...pricingForm, rows: rowCounts(pricingForm.values, pricingForm.blank), isDefault: pricing.isDefault, updatedAt: pricing.updatedAt },
      underwriting: { ...(forms.underwriting ?? { values: fieldValues(ruleValues), errors: {}, message: null }), updatedAt: rulesUpdatedAt },
      versions: await accountApiVersion(ctx, accountId),
      lender: forms.lender ?? { values: lenderValues(await getLender(ctx, accountId)), errors: {}, message: null },
      done: DONE[String(koa.query.done)] ?? null,
    },
    status,
  );
}

export function settingsRoutes(router: Router, ctx: AppContext): void {
  router.get('settings', '/settings', (koa) => settingsPage(koa, ctx));
  apiVersionRoutes(router, ctx);
  lenderRoutes(router, ctx, (koa, form) => settingsPage(koa, ctx, { lender: form }, 400));

  router.post('settings.pricing', '/settings/pricing', async (koa) => {
    const session = requireRoleFor(koa, 'updatePricing');
    const form = formOf(koa);
    const { body, fieldOf } = decodeForm<RateSheet>(form, requestSchema('updatePricing'));
    body.flatFees ??= [];
    try {
      const issues = contractIssues('updatePricing', body);
      if (issues.length > 0) throw fail.validation(`The rate sheet is not valid: ${issues[0]!.pointer} ${issues[0]!.message}`, issues);
      await setRateSheet(actingAs(ctx, koa, session), accountOf(session), body);
      redirect(koa, '/dashboard/settings?done=pricing');
    } catch (err) {
      const shown = formErrors(err, fieldOf);
      if (!shown) throw err;
      await settingsPage(koa, ctx, { pricing: { values: submittedValues(form), errors: shown.fields, message: shown.message, blank: 0 } }, 400);
    }
  });

  router.post('settings.underwriting', '/settings/underwriting', async (koa) => {
    const session = requireRoleFor(koa, 'updateUnderwritingRules');
    const form = formOf(koa);
    const { body } = decodeForm<UnderwritingRules>(form, requestSchema('updateUnderwritingRules'));
    try {
      const issues = contractIssues('updateUnderwritingRules', body);
      if (issues.length > 0) throw fail.validation(`The rules are not valid: ${issues[0]!.pointer} ${issues[0]!.message}`, issues);
      await setUnderwritingRules(actingAs(ctx, koa, session), accountOf(session), body);
      redirect(koa, '/dashboard/settings?done=underwriting');
    } catch (err) {
      const shown = formErrors(err);
      if (!shown) throw err;
      await settingsPage(koa, ctx, { underwriting: { values: submittedValues(form), errors: shown.fields, message: shown.message } }, 400);
    }
  });
}

