/**
 * The transmittal sheet (FIG 2026 section 2, record 1): who files, for which year, and how many
 * LAR rows follow. An annual filing is quarter 4 (V602). The contact person's office address is
 * the lender's address from the account settings: the settings hold one address.
 */
import { fieldText } from './larRow.ts';
import { TS_KEYS, type TsKey } from './layout.ts';
import type { LenderIdentity } from './source.ts';

export interface TransmittalRow {
  fields: string[];
  /** Settings the transmittal sheet needs that the account does not have yet. */
  missing: TsKey[];
}

export function transmittalRowOf(lender: LenderIdentity, year: number, totalLines: number): TransmittalRow {
  const values = {} as Record<TsKey, string>;
  const missing: TsKey[] = [];
  const setOrOwe = (key: TsKey, value: string | null | undefined) => {
    if (value === null || value === undefined) {
      values[key] = '';
      missing.push(key);
    } else values[key] = value;
  };
  const text = (value: string | null | undefined) => (value === null || value === undefined ? null : fieldText(value));
  setOrOwe('recordId', '1');
  setOrOwe('institutionName', text(lender.name));
  setOrOwe('calendarYear', String(year));
  setOrOwe('calendarQuarter', '4');
  setOrOwe('contactName', text(lender.contact?.name));
  setOrOwe('contactPhone', lender.contact?.phone);
  setOrOwe('contactEmail', text(lender.contact?.email));
  setOrOwe('contactStreet', text(lender.address?.street));
  setOrOwe('contactCity', text(lender.address?.city));
  setOrOwe('contactState', lender.address?.state);
  setOrOwe('contactZip', lender.address?.zip);
  setOrOwe('agencyCode', lender.agencyCode === null ? null : String(lender.agencyCode));
  setOrOwe('totalLines', String(totalLines));
  setOrOwe('taxId', lender.taxId);
  setOrOwe('lei', lender.lei?.toUpperCase());
  return { fields: TS_KEYS.map((key) => values[key]), missing: TS_KEYS.filter((key) => missing.includes(key)) };
}

/** One line of the file: fields joined by pipes (FIG 1.1: pipe-delimited text, one record a line). */
export function pipeLine(fields: readonly string[]): string {
  return fields.join('|') + '\n';
}
