/**
 * The lender's identity as notices to applicants name it (Regulation B's notice of action taken
 * gives the creditor's name and address, 12 CFR 1002.9(a)(2)): set by an admin in the dashboard's
 * settings. The form sends text fields; this checks them as the contract's Lender schema states.
 */
import type { components } from '../../../generated/api.d.ts';
import { STATE_FIPS } from '../applications/applicationData.ts';
import { textIssue } from '../text/textRule.ts';

export type Lender = components['schemas']['Lender'];

/** The form's fields, each as typed (trimmed by the caller). */
export interface LenderForm {
  name: string;
  street: string;
  city: string;
  state: string;
  zip: string;
}

interface Issue {
  pointer: string;
  message: string;
}

const ZIP = /^[0-9]{5}(-[0-9]{4})?$/;

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
  ].filter((issue): issue is Issue => issue !== null);
  if (issues.length > 0) return { issues };
  return {
    lender: {
      name: form.name,
      address: { street: form.street, city: form.city, state: form.state as Lender['address']['state'], zip: form.zip },
    },
  };
}
