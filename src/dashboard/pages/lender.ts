/**
 * The lender's name and address on the settings page (admins): what notices to applicants give as
 * the creditor, with the federal agency their ECOA statement names; and what the HMDA register's transmittal sheet adds (LEI, contact, tax id, federal
 * agency). Saved whole; the use case checks it and records it in the audit log.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { AppContext } from '../../context.ts';
import type { Lender } from '../../domain/accounts/lender.ts';
import { updateLender } from '../../services/lender.ts';
import { actingAs, accountOf, formErrors, formOf, redirect, requireRoleFor, submittedValues } from '../page.ts';

export const LENDER_DONE: Record<string, string> = {
  lender: "The lender's details are saved: notices from now on give them.",
};

export interface LenderFormState {
  values: Record<string, string>;
  errors: Record<string, string>;
  message: string | null;
}

/** The form's values for a stored lender (field names as the Lender schema's pointers). */
export function lenderValues(lender: Lender | null): Record<string, string> {
  const values: Record<string, string> = Object.create(null);
  if (!lender) return values;
  values['/name'] = lender.name;
  values['/address/street'] = lender.address.street;
  values['/address/city'] = lender.address.city;
  values['/address/state'] = lender.address.state;
  values['/address/zip'] = lender.address.zip;
  values['/ecoaAgency'] = lender.ecoaAgency ?? '';
  values['/lei'] = lender.lei ?? '';
  values['/contact/name'] = lender.contact?.name ?? '';
  values['/contact/phone'] = lender.contact?.phone ?? '';
  values['/contact/email'] = lender.contact?.email ?? '';
  values['/taxId'] = lender.taxId ?? '';
  values['/agencyCode'] = lender.agencyCode === undefined ? '' : String(lender.agencyCode);
  return values;
}

export function lenderRoutes(router: Router, ctx: AppContext, showAgain: (koa: Context, form: LenderFormState) => Promise<void>): void {
  // Admin only, as every write of the settings page (the role of the underwriting rules' update).
  router.post('settings.lender', '/settings/lender', async (koa) => {
    const session = requireRoleFor(koa, 'updateUnderwritingRules');
    const form = formOf(koa);
    const field = (name: string) => (form.get(name) ?? '').trim();
    try {
      await updateLender(actingAs(ctx, koa, session), accountOf(session), {
        name: field('/name'),
        street: field('/address/street'),
        city: field('/address/city'),
        state: field('/address/state').toUpperCase(),
        zip: field('/address/zip'),
        ecoaAgency: field('/ecoaAgency'),
        lei: field('/lei').toUpperCase(),
        contactName: field('/contact/name'),
        contactPhone: field('/contact/phone'),
        contactEmail: field('/contact/email'),
        taxId: field('/taxId'),
        agencyCode: field('/agencyCode'),
      });
      redirect(koa, '/dashboard/settings?done=lender#lender');
    } catch (err) {
      const shown = formErrors(err);
      if (!shown) throw err;
      await showAgain(koa, { values: submittedValues(form), errors: shown.fields, message: shown.message });
    }
  });
}
