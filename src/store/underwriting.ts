/** Each account's underwriting rules: percentages as decimal text, money as integer cents. */
import { Decimal } from 'decimal.js';
import { DEFAULT_CONDITIONS, type ConditionInput } from '../domain/applications/conditions.ts';
import type { UnderwritingRules } from '../domain/underwriting/rules.ts';
import { fromCents, toCents } from '../domain/applications/money.ts';
import type { SqlExecutor } from './store.ts';

export interface StoredUnderwritingRules {
  rules: UnderwritingRules;
  updatedAt: string;
}

interface RulesRow {
  max_dti_percent: string;
  refer_max_dti_percent: string;
  max_ltv_percent: string;
  refer_max_ltv_percent: string;
  min_credit_score: number;
  refer_min_credit_score: number;
  max_amount_cents: number;
  refer_max_amount_cents: number;
  conditions_json: string | null;
  updated_at: string;
}

const percentText = (value: number): string => new Decimal(value).toString();

/** The memo's key (see RowMemo) for an account's rules (null: none, the defaults); every write of underwriting_rules forgets it. */
const rulesKey = (accountId: string) => `underwriting-rules:${accountId}`;

/**
 * The account's rules, or undefined while it uses the defaults. Remembered where the engine offers
 * a memo (sql.js), absence included: the rules change only through saveUnderwritingRules and
 * deleteUnderwritingRules, which forget them.
 */
export async function findUnderwritingRules(db: SqlExecutor, accountId: string): Promise<StoredUnderwritingRules | undefined> {
  const remembered = db.memo?.get<StoredUnderwritingRules | null>(rulesKey(accountId));
  if (remembered !== undefined) return remembered ?? undefined;
  const stored = await readUnderwritingRules(db, accountId);
  db.memo?.set(rulesKey(accountId), stored ? deepFreeze(stored) : null);
  return stored;
}

/** Frozen, so that no caller can change what the next one is given. */
function deepFreeze<T extends object>(value: T): T {
  for (const child of Object.values(value)) if (child !== null && typeof child === 'object') deepFreeze(child as object);
  return Object.freeze(value);
}

async function readUnderwritingRules(db: SqlExecutor, accountId: string): Promise<StoredUnderwritingRules | undefined> {
  const row = await db.get<RulesRow>(
    `SELECT max_dti_percent, refer_max_dti_percent, max_ltv_percent, refer_max_ltv_percent, min_credit_score,
       refer_min_credit_score, max_amount_cents, refer_max_amount_cents, conditions_json, updated_at
     FROM underwriting_rules WHERE account_id = ?`,
    [accountId],
  );
  if (!row) return undefined;
  return {
    rules: {
      debtToIncome: { approveAtMost: Number(row.max_dti_percent), referAtMost: Number(row.refer_max_dti_percent) },
      loanToValue: { approveAtMost: Number(row.max_ltv_percent), referAtMost: Number(row.refer_max_ltv_percent) },
      creditScore: { approveAtLeast: row.min_credit_score, referAtLeast: row.refer_min_credit_score },
      loanAmount: { approveAtMost: fromCents(row.max_amount_cents), referAtMost: fromCents(row.refer_max_amount_cents) },
      // null: the account never chose its conditions (or set its rules before it could), so the defaults apply.
      conditions: row.conditions_json === null ? structuredClone([...DEFAULT_CONDITIONS]) : (JSON.parse(row.conditions_json) as ConditionInput[]),
    },
    updatedAt: row.updated_at,
  };
}

/** Saves the rules; without `conditions` the account's conditions stay as they were (the defaults, until it sets its own). */
export async function saveUnderwritingRules(
  tx: SqlExecutor,
  accountId: string,
  rules: Omit<UnderwritingRules, 'conditions'> & { conditions?: readonly ConditionInput[] | undefined },
  updatedAt: string,
): Promise<void> {
  const values = [
    percentText(rules.debtToIncome.approveAtMost),
    percentText(rules.debtToIncome.referAtMost),
    percentText(rules.loanToValue.approveAtMost),
    percentText(rules.loanToValue.referAtMost),
    rules.creditScore.approveAtLeast,
    rules.creditScore.referAtLeast,
    toCents(rules.loanAmount.approveAtMost),
    toCents(rules.loanAmount.referAtMost),
    rules.conditions === undefined ? null : JSON.stringify(rules.conditions.map((c) => ({ type: c.type, description: c.description, dueBefore: c.dueBefore }))),
    updatedAt,
  ];
  tx.memo?.forget(rulesKey(accountId));
  await tx.run(
    `INSERT INTO underwriting_rules (account_id, max_dti_percent, refer_max_dti_percent, max_ltv_percent, refer_max_ltv_percent,
       min_credit_score, refer_min_credit_score, max_amount_cents, refer_max_amount_cents, conditions_json, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (account_id) DO UPDATE SET max_dti_percent = excluded.max_dti_percent,
       refer_max_dti_percent = excluded.refer_max_dti_percent, max_ltv_percent = excluded.max_ltv_percent,
       refer_max_ltv_percent = excluded.refer_max_ltv_percent, min_credit_score = excluded.min_credit_score,
       refer_min_credit_score = excluded.refer_min_credit_score, max_amount_cents = excluded.max_amount_cents,
       refer_max_amount_cents = excluded.refer_max_amount_cents, conditions_json = COALESCE(excluded.conditions_json, underwriting_rules.conditions_json), updated_at = excluded.updated_at`,
    [accountId, ...values],
  );
}

/** Removes the account's own rules (it decides with the defaults again); returns how many rows went (0 or 1). */
export async function deleteUnderwritingRules(tx: SqlExecutor, accountId: string): Promise<number> {
  tx.memo?.forget(rulesKey(accountId));
  return (await tx.run('DELETE FROM underwriting_rules WHERE account_id = ?', [accountId])).changes;
}
