import { describe, expect, it } from 'vitest';
import { isForeignKeyViolation, isUniqueViolation } from '../../../../src/store/core/errors.ts';

describe('error classification', () => {
  it('recognises SQLite and PostgreSQL unique violations', () => {
    expect(isUniqueViolation(new Error('UNIQUE constraint failed: accounts.email'))).toBe(true);
    expect(isUniqueViolation(Object.assign(new Error('duplicate key value violates unique constraint "x"'), { code: '23505' }))).toBe(true);
    expect(isUniqueViolation(new Error('NOT NULL constraint failed: accounts.email'))).toBe(false);
    expect(isUniqueViolation(undefined)).toBe(false);
  });

  it('recognises foreign key violations', () => {
    expect(isForeignKeyViolation(new Error('FOREIGN KEY constraint failed'))).toBe(true);
    expect(isForeignKeyViolation({ code: '23503' })).toBe(true);
    expect(isForeignKeyViolation(new Error('UNIQUE constraint failed: a.b'))).toBe(false);
  });
});
