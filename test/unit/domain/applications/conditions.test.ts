import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CONDITION_STAGES,
  CONDITION_TYPES,
  closingConditionsCleared,
  conditionsAtApproval,
  conditionToSatisfy,
  conditionTypeSatisfiedBy,
  DEFAULT_CONDITIONS,
  type ConditionState,
  type Evidence,
} from '../../../../src/domain/applications/conditions.ts';
import { DOCUMENT_TYPES } from '../../../../src/domain/documents/types.ts';

const condition = fc.record({
  conditionId: fc.stringMatching(/^cnd-[0-9a-z]{4}$/),
  type: fc.constantFrom(...CONDITION_TYPES),
  dueBefore: fc.constantFrom(...CONDITION_STAGES),
  status: fc.constantFrom('open' as const, 'satisfied' as const, 'waived' as const),
});
const evidence: fc.Arbitrary<Evidence> = fc.oneof(
  fc.record({ kind: fc.constant('document' as const), documentType: fc.constantFrom(...DOCUMENT_TYPES) }),
  fc.record({ kind: fc.constant('bank_verification' as const), verified: fc.boolean() }),
);

describe('which condition a piece of evidence satisfies by itself', () => {
  it.each([
    [{ kind: 'document', documentType: 'income_proof' }, 'income_proof'],
    [{ kind: 'document', documentType: 'identity' }, 'identity'],
    [{ kind: 'document', documentType: 'bank_statement' }, 'bank_statement'],
    [{ kind: 'document', documentType: 'property_appraisal' }, null],
    [{ kind: 'document', documentType: 'other' }, null],
    [{ kind: 'bank_verification', verified: true }, 'bank_account_verified'],
    [{ kind: 'bank_verification', verified: false }, null],
  ] as const)('%j satisfies %s', (given, type) => {
    expect(conditionTypeSatisfiedBy(given)).toBe(type);
  });

  it('never a custom condition nor an appraisal: those need a person', () => {
    fc.assert(fc.property(evidence, (e) => !['custom', 'property_appraisal'].includes(conditionTypeSatisfiedBy(e) ?? '')));
  });

  it('picks the oldest open condition of the matching type, never a cleared one or another type', () => {
    fc.assert(
      fc.property(fc.array(condition, { maxLength: 8 }), evidence, (conditions, e) => {
        const chosen = conditionToSatisfy(conditions, e);
        const type = conditionTypeSatisfiedBy(e);
        const expected = conditions.find((c) => c.status === 'open' && c.type === type) ?? null;
        expect(chosen).toBe(expected);
      }),
    );
  });
});

describe('when every closing condition is cleared', () => {
  it('is exactly when no closing condition is open (funding ones may stay open)', () => {
    fc.assert(
      fc.property(fc.array(condition, { maxLength: 8 }), (conditions) => {
        const openClosing = conditions.some((c) => c.dueBefore === 'closing' && c.status === 'open');
        expect(closingConditionsCleared(conditions)).toBe(!openClosing);
      }),
    );
  });

  it('holds for no conditions at all', () => {
    expect(closingConditionsCleared([])).toBe(true);
  });

  it('one satisfaction at a time reaches it once: from not cleared to cleared, never back', () => {
    fc.assert(
      fc.property(fc.array(condition, { minLength: 1, maxLength: 8 }), fc.array(fc.nat(), { maxLength: 12 }), (start, picks) => {
        let conditions: ConditionState[] = start.map((c) => ({ ...c }));
        let transitions = 0;
        let cleared = closingConditionsCleared(conditions);
        for (const pick of picks) {
          const target = conditions[pick % conditions.length]!;
          conditions = conditions.map((c) => (c === target && c.status === 'open' ? { ...c, status: 'satisfied' as const } : c));
          const now = closingConditionsCleared(conditions);
          if (!cleared && now) transitions++;
          expect(cleared && !now).toBe(false);
          cleared = now;
        }
        expect(transitions).toBeLessThanOrEqual(1);
      }),
    );
  });
});

describe('conditions attached at approval', () => {
  it("the rules' conditions first, then the reviewer's, each satisfied by at most one piece of evidence on file", () => {
    const planned = conditionsAtApproval(
      DEFAULT_CONDITIONS,
      [{ type: 'income_proof', description: 'A second pay stub', dueBefore: 'funding' }],
      [
        { kind: 'document', documentType: 'income_proof' },
        { kind: 'bank_verification', verified: true },
      ],
    );
    expect(planned.map((p) => [p.input.type, p.addedBy, p.satisfiedByEvidence])).toEqual([
      ['income_proof', 'underwriting_rules', 0],
      ['bank_account_verified', 'underwriting_rules', 1],
      ['property_appraisal', 'underwriting_rules', null],
      ['income_proof', 'underwriter', null],
    ]);
  });

  it('uses each piece of evidence once at most', () => {
    const inputs = fc.array(fc.record({ type: fc.constantFrom(...CONDITION_TYPES), description: fc.constant('x'), dueBefore: fc.constantFrom(...CONDITION_STAGES) }), {
      maxLength: 6,
    });
    fc.assert(
      fc.property(inputs, inputs, fc.array(evidence, { maxLength: 6 }), (rules, reviewer, onFile) => {
        const used = conditionsAtApproval(rules, reviewer, onFile)
          .map((p) => p.satisfiedByEvidence)
          .filter((i) => i !== null);
        expect(new Set(used).size).toBe(used.length);
      }),
    );
  });
});
