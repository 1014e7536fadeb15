import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NAME_MATCH_THRESHOLD, nameMatchOutcome, normaliseName, scoreNameMatch } from '../../../../src/domain/banks/nameMatch.ts';

describe('normaliseName', () => {
  it.each([
    ['  Jane   DOE ', 'jane doe'],
    ['José Müller', 'jose muller'],
    ['Zoë Ångström-Ñúñez', 'zoe angstrom nunez'],
    ["Seán O'Brien", 'sean obrien'],
    ['Doe, Jane', 'jane doe'],
    ['Dr. Jane Doe', 'jane doe'],
    ['John Smith Jr.', 'john smith'],
    ['Straße Łukasz', 'strasse lukasz'],
    ['Ｊａｎｅ Ｄｏｅ', 'jane doe'],
  ])('%j normalises to %j', (raw, normal) => {
    expect(normaliseName(raw)).toBe(normal);
  });
});

describe('scoreNameMatch: names that match', () => {
  it.each([
    ['case', 'Jane Doe', 'JANE DOE'],
    ['accents', 'José Müller', 'Jose Muller'],
    ['accents and case', 'Zoë Ångström', 'ZOE ANGSTROM'],
    ['punctuation', "Seán O'Brien", 'Sean OBrien'],
    ['word order', 'Doe Jane', 'Jane Doe'],
    ['surname first with a comma', 'Doe, Jane', 'Jane Doe'],
    ['word order with a middle name', 'Doe Jane Alice', 'Jane Alice Doe'],
    ['a left-out middle initial', 'Jane Doe', 'Jane A. Doe'],
    ['a middle initial for the middle name', 'Jane Alice Doe', 'Jane A Doe'],
    ['a left-out middle name', 'Jane Doe', 'Jane Alice Doe'],
    ['hyphen or space in a first name', 'Mary-Jane Watson', 'Mary Jane Watson'],
    ['hyphen or nothing in a first name', 'Mary-Jane Watson', 'Maryjane Watson'],
    ['hyphen or space in a surname', 'Ana Smith-Jones', 'Ana Smith Jones'],
    ['a title', 'Dr. Jane Doe', 'Jane Doe'],
    ['a generational suffix', 'John Smith Jr.', 'John Smith'],
    ['one typo in a long word', 'Jonathan Smith', 'Jonathon Smith'],
  ])('%s: %j and %j match', (_why, applicant, holder) => {
    const result = scoreNameMatch(applicant, holder);
    expect(result.outcome).toBe('match');
    expect(result.score).toBeGreaterThanOrEqual(NAME_MATCH_THRESHOLD);
  });

  it('scores a left-out middle initial 0.941 and a left-out middle name 0.889', () => {
    expect(scoreNameMatch('Jane Doe', 'Jane A. Doe').score).toBe(0.941);
    expect(scoreNameMatch('Jane Doe', 'Jane Alice Doe').score).toBe(0.889);
  });
});

describe('scoreNameMatch: names that do not match', () => {
  it.each([
    ['another first name, same surname', 'Jane Doe', 'John Doe', 'mismatch'],
    ['another surname, same first name', 'Jane Doe', 'Jane Roe', 'mismatch'],
    ['nothing in common', 'John Smith', 'Jane Doe', 'mismatch'],
    ['a name of punctuation only', 'Jane Doe', '!!!', 'mismatch'],
    ['contradicting middle initials', 'Jane A. Doe', 'Jane B. Doe', 'partial'],
    ['an initial for the first name', 'J Doe', 'Jane Doe', 'partial'],
    ['a surname alone', 'Jane Doe', 'Doe', 'partial'],
    ['a second surname added', 'Jane Doe', 'Jane Doe-Smith', 'partial'],
    ['a short name one letter off', 'Jon Doe', 'John Doe', 'mismatch'],
  ])('%s: %j and %j are %s', (_why, applicant, holder, outcome) => {
    const result = scoreNameMatch(applicant, holder);
    expect(result.outcome).toBe(outcome);
    expect(result.score).toBeLessThan(NAME_MATCH_THRESHOLD);
  });
});

describe('nameMatchOutcome', () => {
  it.each([
    [1, 'match'],
    [0.85, 'match'],
    [0.849, 'partial'],
    [0.6, 'partial'],
    [0.599, 'mismatch'],
    [0, 'mismatch'],
  ])('a score of %d is %s', (score, outcome) => {
    expect(nameMatchOutcome(score)).toBe(outcome);
  });
});

const word = fc.stringMatching(/^[A-Z][a-z]{1,9}$/);
const name = fc.array(word, { minLength: 1, maxLength: 4 }).map((words) => words.join(' '));

describe('scoreNameMatch properties', () => {
  it('is symmetric and between 0 and 1 with three decimals', () => {
    fc.assert(
      fc.property(name, name, (a, b) => {
        const ab = scoreNameMatch(a, b);
        expect(ab).toEqual(scoreNameMatch(b, a));
        expect(ab.score).toBeGreaterThanOrEqual(0);
        expect(ab.score).toBeLessThanOrEqual(1);
        expect(Math.round(ab.score * 1000) / 1000).toBe(ab.score);
      }),
    );
  });

  it('a name matches itself after changes of case, word order and spacing with a score of 1', () => {
    fc.assert(
      fc.property(fc.array(word, { minLength: 1, maxLength: 5 }), fc.infiniteStream(fc.boolean()), (words, flips) => {
        const changed = [...words].reverse().map((w) => (flips.next().value ? w.toUpperCase() : w.toLowerCase())).join('   ');
        expect(scoreNameMatch(words.join(' '), changed)).toEqual({ score: 1, outcome: 'match' });
      }),
    );
  });

  it('accents never change the score', () => {
    const accented: Record<string, string> = { a: 'á', e: 'é', i: 'ï', o: 'ö', u: 'ü', n: 'ñ', c: 'ç' };
    fc.assert(
      fc.property(name, name, (a, b) => {
        const accent = (s: string) => s.replace(/[aeiounc]/g, (ch) => accented[ch]!);
        expect(scoreNameMatch(accent(a), b)).toEqual(scoreNameMatch(a, b));
      }),
    );
  });

  it('names with no letter in common never match', () => {
    fc.assert(
      fc.property(fc.array(fc.stringMatching(/^[a-m]{2,8}$/), { minLength: 1, maxLength: 3 }), fc.array(fc.stringMatching(/^[n-z]{2,8}$/), { minLength: 1, maxLength: 3 }), (a, b) => {
        expect(scoreNameMatch(a.join(' '), b.join(' '))).toEqual({ score: 0, outcome: 'mismatch' });
      }),
    );
  });
});
