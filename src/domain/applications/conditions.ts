/**
 * Conditions of an approval, as pure functions: which conditions an approval attaches (the
 * account's rules, then a reviewer's own), which open condition a piece of evidence satisfies by
 * itself (an uploaded document of the right type, a verified bank check), and when every
 * condition due before closing is cleared, so that an approved application moves on to
 * `clear_to_close`.
 */
import type { components } from '../../../generated/api.d.ts';
import type { DocumentType } from '../documents/types.ts';

export type ConditionType = components['schemas']['ConditionType'];
export type ConditionInput = components['schemas']['ConditionInput'];
export type ConditionStatus = components['schemas']['Condition']['status'];
export type ConditionStage = components['schemas']['ConditionDueBefore'];

/** Every condition type, in the spec's order (test/unit/contract/specEnums.test.ts ties it to the spec's enum). */
export const CONDITION_TYPES = [
  'income_proof',
  'identity',
  'bank_statement',
  'property_appraisal',
  'bank_account_verified',
  'custom',
] as const satisfies readonly ConditionType[];

export const CONDITION_STAGES = ['closing', 'funding'] as const satisfies readonly ConditionStage[];

/** The least a condition must tell these functions. */
export interface ConditionState {
  conditionId: string;
  type: ConditionType;
  dueBefore: ConditionStage;
  status: ConditionStatus;
}

/** Something that happened to an application and may satisfy a condition by itself. */
export type Evidence = { kind: 'document'; documentType: DocumentType } | { kind: 'bank_verification'; verified: boolean };

/**
 * The conditions an account attaches to every approval when it never set its own: proof of
 * income and a verified bank account (both cleared by their evidence), and an appraisal at or
 * above the property value, which a person judges (an appraisal's value is not read from its file).
 */
export const DEFAULT_CONDITIONS: readonly ConditionInput[] = [
  { type: 'income_proof', description: 'Proof of income (recent pay stubs or a tax return)', dueBefore: 'closing' },
  { type: 'bank_account_verified', description: "The applicant's bank account verified with a partner bank", dueBefore: 'closing' },
  { type: 'property_appraisal', description: 'An appraisal valuing the property at or above the stated property value', dueBefore: 'closing' },
];

/** The document types whose upload satisfies a condition of the same name. */
const DOCUMENT_CONDITIONS: Partial<Record<DocumentType, ConditionType>> = {
  income_proof: 'income_proof',
  identity: 'identity',
  bank_statement: 'bank_statement',
};

/** The condition type a piece of evidence satisfies by itself, or null (an unverified check, an appraisal file, `other`). */
export function conditionTypeSatisfiedBy(evidence: Evidence): ConditionType | null {
  if (evidence.kind === 'bank_verification') return evidence.verified ? 'bank_account_verified' : null;
  return DOCUMENT_CONDITIONS[evidence.documentType] ?? null;
}

/**
 * The open condition the evidence satisfies: the oldest open one of the matching type (conditions
 * come oldest first), so that two conditions asking for the same kind of evidence need two pieces.
 */
export function conditionToSatisfy<C extends ConditionState>(conditions: readonly C[], evidence: Evidence): C | null {
  const type = conditionTypeSatisfiedBy(evidence);
  if (type === null) return null;
  return conditions.find((c) => c.status === 'open' && c.type === type) ?? null;
}

/** True when nothing due before closing is still open (true for no conditions at all). */
export function closingConditionsCleared(conditions: readonly ConditionState[]): boolean {
  return conditions.every((c) => c.dueBefore !== 'closing' || c.status !== 'open');
}

/**
 * The conditions an approval attaches: the rules' own, then the reviewer's. Each starts open,
 * unless evidence already on file (documents uploaded, a bank check verified before the approval)
 * satisfies it: each piece of evidence satisfies at most one condition, in order.
 */
export function conditionsAtApproval(
  ruleConditions: readonly ConditionInput[],
  reviewerConditions: readonly ConditionInput[],
  evidenceOnFile: readonly Evidence[],
): Array<{ input: ConditionInput; addedBy: 'underwriting_rules' | 'underwriter'; satisfiedByEvidence: number | null }> {
  const attached = [
    ...ruleConditions.map((input) => ({ input, addedBy: 'underwriting_rules' as const })),
    ...reviewerConditions.map((input) => ({ input, addedBy: 'underwriter' as const })),
  ];
  const used = new Set<number>();
  return attached.map(({ input, addedBy }) => {
    const index = evidenceOnFile.findIndex((evidence, i) => !used.has(i) && conditionTypeSatisfiedBy(evidence) === input.type);
    if (index === -1) return { input, addedBy, satisfiedByEvidence: null };
    used.add(index);
    return { input, addedBy, satisfiedByEvidence: index };
  });
}
