/** The API's view of a condition (inside an application, and in `application.conditions_updated`). */
import type { components } from '../../generated/api.d.ts';
import type { ConditionRecord } from '../store/conditions.ts';

export type Condition = components['schemas']['Condition'];

export function toCondition(record: ConditionRecord): Condition {
  const r = record.resolution;
  return {
    conditionId: record.conditionId,
    type: record.type,
    description: record.description,
    dueBefore: record.dueBefore,
    status: record.status,
    satisfiedBy: r === null ? null : { kind: r.kind, documentId: r.documentId, verificationId: r.verificationId, actor: r.actor, note: r.note, at: r.at },
    addedBy: record.addedBy,
    createdAt: record.createdAt,
  };
}
