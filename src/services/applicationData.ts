/**
 * The application's property and loan data and the applicant's demographic information, on create
 * and edit (src/services/applications.ts calls in here), and the admins' read of the demographics.
 * Demographics are written to a table of their own in the application's transaction and never
 * returned with the application: nothing that shows, logs or publishes an application can carry
 * them.
 */
import type { components } from '../../generated/api.d.ts';
import type { AppContext } from '../context.ts';
import {
  addressIssues,
  demographicsIssues,
  toDemographics,
  toPropertyAddress,
  unitIssues,
  type ApplicationData,
} from '../domain/applications/applicationData.ts';
import { isLivemode } from '../domain/accounts/environments.ts';
import type { FieldIssue } from '../errors.ts';
import { deleteDemographics, findDemographics, putDemographics } from '../store/applicationDemographics.ts';
import type { SqlExecutor } from '../store/store.ts';
import { requireApplication } from './applicationLookup.ts';

type DataInput = Pick<components['schemas']['ApplicationPatch'], 'propertyAddress' | 'loanPurpose' | 'occupancy' | 'propertyType' | 'totalUnits' | 'lienStatus' | 'loanType'>;
type DemographicsField = components['schemas']['ApplicationPatch']['demographics'];
export type ApplicationDemographics = components['schemas']['ApplicationDemographics'];

/** `current` with the fields `input` sends (null clears one; a field left out keeps its value). */
export function mergeApplicationData(current: ApplicationData, input: DataInput): ApplicationData {
  const pick = <T>(sent: T | undefined, kept: T): T => (sent === undefined ? kept : sent);
  return {
    propertyAddress: input.propertyAddress === undefined ? current.propertyAddress : input.propertyAddress === null ? null : toPropertyAddress(input.propertyAddress),
    loanPurpose: pick(input.loanPurpose, current.loanPurpose),
    occupancy: pick(input.occupancy, current.occupancy),
    propertyType: pick(input.propertyType, current.propertyType),
    totalUnits: pick(input.totalUnits, current.totalUnits),
    lienStatus: pick(input.lienStatus, current.lienStatus),
    loanType: pick(input.loanType, current.loanType),
  };
}

/**
 * What is wrong across fields of the data as it would be after the request (an edit is judged with
 * the fields it keeps), and of the demographics sent.
 */
export function applicationDataIssues(data: ApplicationData, demographics: DemographicsField | undefined): FieldIssue[] {
  return [
    ...(data.propertyAddress === null ? [] : addressIssues(data.propertyAddress)),
    ...unitIssues(data),
    ...(demographics ? demographicsIssues(demographics) : []),
  ];
}

/** In the application's transaction: the demographics sent replace those stored; null removes them; left out keeps them. */
export async function writeDemographics(tx: SqlExecutor, accountId: string, mortgageId: string, sent: DemographicsField | undefined, at: string): Promise<void> {
  if (sent === undefined) return;
  if (sent === null) await deleteDemographics(tx, accountId, mortgageId);
  else await putDemographics(tx, accountId, mortgageId, toDemographics(sent), at);
}

/** The application's demographics (null when none were given); 404 for an application that is not the caller's. */
export async function getApplicationDemographics(ctx: AppContext, accountId: string, mortgageId: string): Promise<ApplicationDemographics> {
  return ctx.store.read(async (db) => {
    await requireApplication(db, accountId, mortgageId);
    const stored = await findDemographics(db, accountId, mortgageId);
    return { mortgageId, demographics: stored?.demographics ?? null, updatedAt: stored?.updatedAt ?? null, livemode: isLivemode(accountId) };
  });
}
