/**
 * The account's underwriting rules: the limits that decide submitted applications, and the
 * conditions attached to every approval. Read inside the deciding transaction (rulesOf), and
 * read or replaced whole by an admin.
 */
import type { components } from '../../generated/api.d.ts';
import type { AppContext } from '../context.ts';
import { isLivemode } from '../domain/accounts/environments.ts';
import { hasAtMostDecimals } from '../domain/applications/money.ts';
import { checkRules, DEFAULT_RULES, type UnderwritingRules } from '../domain/underwriting/rules.ts';
import { fail, throwIfIssues, type FieldIssue } from '../errors.ts';
import type { SqlExecutor } from '../store/store.ts';
import { findUnderwritingRules, saveUnderwritingRules } from '../store/underwriting.ts';
import { recordAudit } from './audit.ts';

export type UnderwritingRulesView = components['schemas']['UnderwritingRules'];
export type UnderwritingRulesUpdate = components['schemas']['UnderwritingRulesUpdate'];

/** The rules that decide the account's applications: its own, or the defaults. */
export async function rulesOf(db: SqlExecutor, accountId: string): Promise<UnderwritingRules> {
  return (await findUnderwritingRules(db, accountId))?.rules ?? DEFAULT_RULES;
}

export async function getUnderwritingRules(ctx: AppContext, accountId: string): Promise<UnderwritingRulesView> {
  const stored = await ctx.store.read((db) => findUnderwritingRules(db, accountId));
  const livemode = isLivemode(accountId);
  return stored ? { ...stored.rules, updatedAt: stored.updatedAt, livemode } : { ...structuredClone(DEFAULT_RULES), updatedAt: null, livemode };
}

/** Replaces the account's rules whole: 400 for too many decimals, 422 for limits on the wrong side. */
export async function setUnderwritingRules(ctx: AppContext, accountId: string, rules: UnderwritingRulesUpdate): Promise<UnderwritingRulesView> {
  const issues: FieldIssue[] = [];
  for (const [pointer, value, places] of [
    ['/debtToIncome/approveAtMost', rules.debtToIncome.approveAtMost, 3],
    ['/debtToIncome/referAtMost', rules.debtToIncome.referAtMost, 3],
    ['/loanToValue/approveAtMost', rules.loanToValue.approveAtMost, 3],
    ['/loanToValue/referAtMost', rules.loanToValue.referAtMost, 3],
    ['/loanAmount/approveAtMost', rules.loanAmount.approveAtMost, 2],
    ['/loanAmount/referAtMost', rules.loanAmount.referAtMost, 2],
  ] as const) {
    if (!hasAtMostDecimals(value, places)) issues.push({ pointer, message: `must have at most ${places === 3 ? 'three' : 'two'} decimals` });
  }
  throwIfIssues(issues);
  const broken = checkRules(rules);
  if (broken.length > 0) {
    throw fail.refused('invalid_underwriting_rules', `${broken[0]!.pointer} ${broken[0]!.message}. Nothing was changed.`, {
      errors: broken,
    });
  }
  const updatedAt = ctx.clock.now().toISOString();
  const clean = {
    debtToIncome: { approveAtMost: rules.debtToIncome.approveAtMost, referAtMost: rules.debtToIncome.referAtMost },
    loanToValue: { approveAtMost: rules.loanToValue.approveAtMost, referAtMost: rules.loanToValue.referAtMost },
    creditScore: { approveAtLeast: rules.creditScore.approveAtLeast, referAtLeast: rules.creditScore.referAtLeast },
    loanAmount: { approveAtMost: rules.loanAmount.approveAtMost, referAtMost: rules.loanAmount.referAtMost },
    conditions: rules.conditions?.map((c) => ({ type: c.type, description: c.description, dueBefore: c.dueBefore })),
  };
  const saved = await ctx.store.transaction(async (tx) => {
    const previous = await findUnderwritingRules(tx, accountId);
    await saveUnderwritingRules(tx, accountId, clean, updatedAt);
    const after = (await findUnderwritingRules(tx, accountId))!;
    const before = previous ? previous.rules : DEFAULT_RULES;
    await recordAudit(tx, ctx, { accountId, action: 'underwriting.updated', target: { type: 'underwriting', id: null }, change: { before, after: after.rules } });
    return after;
  });
  return { ...structuredClone(saved.rules), updatedAt, livemode: isLivemode(accountId) };
}
