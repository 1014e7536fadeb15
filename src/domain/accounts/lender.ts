/**
 * The lender's identity as notices to applicants name it (Regulation B's notice of action taken
 * gives the creditor's name and address, 12 CFR 1002.9(a)(2), and its ECOA statement the federal
 * agency that administers the creditor's compliance, 1002.9(b)(1)): set by an admin in the
 * dashboard's settings. The form sends text fields; this checks them as the contract's Lender schema states.
 */
import type { components } from '../../../generated/api.d.ts';
import { STATE_FIPS } from '../applications/applicationData.ts';
import { isValidLei } from '../hmda/uli.ts';
import { textIssue } from '../text/textRule.ts';

export type Lender = components['schemas']['Lender'];

/**
 * The form's fields, each as typed (trimmed by the caller). The HMDA ones may be left empty (a
 * lender that does not report HMDA needs none of them); the contact is given whole or not at all.
 */
export interface LenderForm {
  name: string;
  street: string;
  city: string;
  state: string;
  zip: string;
  ecoaAgency?: string;
  lei?: string;
  contactName?: string;
  contactPhone?: string;
  contactEmail?: string;
  taxId?: string;
  agencyCode?: string;
}

interface Issue {
  pointer: string;
  message: string;
}

const ZIP = /^[0-9]{5}(-[0-9]{4})?$/;
const PHONE = /^[0-9]{3}-[0-9]{3}-[0-9]{4}$/;
const TAX_ID = /^[0-9]{2}-[0-9]{7}$/;
/** An address with one @, something before it and a dot in the domain (the FIG's V717 asks no more). */
const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;
/** HMDA's federal agencies (FIG, transmittal sheet): 1 OCC, 2 FRS, 3 FDIC, 5 NCUA, 7 HUD, 9 CFPB. */
const AGENCY_CODES = ['1', '2', '3', '5', '7', '9'];

function textFieldIssue(pointer: string, value: string, max: number): Issue | null {
  if (value.length === 0) return { pointer, message: 'is required' };
  if (value.length > max) return { pointer, message: `must be at most ${max} characters` };
  const rule = textIssue(value);
  return rule ? { pointer, message: rule } : null;
}

/** The lender the form describes, or what is wrong with it (pointers as the Lender schema's). */
export function lenderFromForm(form: LenderForm): { lender: Lender } | { issues: Issue[] } {
  const issues = [
    textFieldIssue('/name', form.name, 200),
    textFieldIssue('/address/street', form.street, 200),
    textFieldIssue('/address/city', form.city, 100),
    form.state in STATE_FIPS ? null : { pointer: '/address/state', message: 'must be a USPS state or territory code (CA, NY, DC, PR…)' },
    ZIP.test(form.zip) ? null : { pointer: '/address/zip', message: 'must be a ZIP code: five digits, or ZIP+4 (94105-1234)' },
    form.ecoaAgency ? textFieldIssue('/ecoaAgency', form.ecoaAgency, 300) : null,
    ...hmdaIssues(form),
  ].filter((issue): issue is Issue => issue !== null);
  if (issues.length > 0) return { issues };
  const lender: Lender = {
    name: form.name,
    address: { street: form.street, city: form.city, state: form.state as Lender['address']['state'], zip: form.zip },
  };
  if (form.ecoaAgency) lender.ecoaAgency = form.ecoaAgency;
  if (form.lei) lender.lei = form.lei;
  if (form.contactName || form.contactPhone || form.contactEmail) {
    lender.contact = { name: form.contactName ?? '', phone: form.contactPhone ?? '', email: form.contactEmail ?? '' };
  }
  if (form.taxId) lender.taxId = form.taxId;
  if (form.agencyCode) lender.agencyCode = Number(form.agencyCode) as NonNullable<Lender['agencyCode']>;
  return { lender };
}

/** The HMDA fields' issues: each checked when given, as the FIG's transmittal edits would check it. */
function hmdaIssues(form: LenderForm): (Issue | null)[] {
  const contactGiven = Boolean(form.contactName || form.contactPhone || form.contactEmail);
  return [
    form.lei && !isValidLei(form.lei)
      ? { pointer: '/lei', message: 'must be an LEI: 20 capital letters and digits whose last two are its ISO 17442 check digits' }
      : null,
    contactGiven ? textFieldIssue('/contact/name', form.contactName ?? '', 200) : null,
    contactGiven && !PHONE.test(form.contactPhone ?? '') ? { pointer: '/contact/phone', message: 'must be a phone number written 999-999-9999' } : null,
    contactGiven && !(EMAIL.test(form.contactEmail ?? '') && (form.contactEmail ?? '').length <= 254)
      ? { pointer: '/contact/email', message: 'must be an email address' }
      : null,
    form.taxId && !TAX_ID.test(form.taxId) ? { pointer: '/taxId', message: 'must be a federal tax id written 99-9999999' } : null,
    form.agencyCode && !AGENCY_CODES.includes(form.agencyCode)
      ? { pointer: '/agencyCode', message: 'must be 1 (OCC), 2 (FRS), 3 (FDIC), 5 (NCUA), 7 (HUD) or 9 (CFPB)' }
      : null,
  ];
}
