/**
 * The FIG's validity edits on ethnicity, race, sex and age (FIG 2026 section 4.2, V628–V652,
 * V721), for the applicant and for the co-applicant (whom the service always reports as "no
 * co-applicant"). Each edit's rule is its message in editMessages.ts.
 */
import { blank, hasDuplicate, isWhole, oneOf, type LarEdit } from './editKit.ts';
import type { LarRecord } from './layout.ts';

const ETHNICITIES = ['1', '11', '12', '13', '14', '2'];
const RACES = ['1', '2', '21', '22', '23', '24', '25', '26', '27', '3', '4', '41', '42', '43', '44', '5'];
const AGGREGATE_RACES = ['1', '2', '3', '4', '5'];

const eths = (r: LarRecord) => [r.eth1, r.eth2, r.eth3, r.eth4, r.eth5];
const coEths = (r: LarRecord) => [r.coEth1, r.coEth2, r.coEth3, r.coEth4, r.coEth5];
const races = (r: LarRecord) => [r.race1, r.race2, r.race3, r.race4, r.race5];
const coRaces = (r: LarRecord) => [r.coRace1, r.coRace2, r.coRace3, r.coRace4, r.coRace5];
const laterAllBlank = (values: string[]) => values.slice(1).every(blank);
const raceTextGiven = (r: LarRecord) => !blank(r.raceNative) || !blank(r.raceAsian) || !blank(r.racePacific);
const coRaceTextGiven = (r: LarRecord) => !blank(r.coRaceNative) || !blank(r.coRaceAsian) || !blank(r.coRacePacific);
const nonNaturalApplicant = (r: LarRecord) => r.eth1 === '4' && r.race1 === '7' && r.sex === '4';

export const DEMOGRAPHIC_EDITS: readonly LarEdit[] = [
  { code: 'V628-1', fails: (r) => !oneOf(r.eth1, [...ETHNICITIES, '3', '4']) && !(blank(r.eth1) && !blank(r.ethOther)) },
  { code: 'V628-2', fails: (r) => eths(r).slice(1).some((v) => !blank(v) && !oneOf(v, ETHNICITIES)) },
  { code: 'V628-3', fails: (r) => hasDuplicate(eths(r)) },
  { code: 'V628-4', fails: (r) => oneOf(r.eth1, ['3', '4']) && !laterAllBlank(eths(r)) },
  { code: 'V629-1', fails: (r) => !oneOf(r.ethObserved, ['1', '2', '3']) },
  {
    code: 'V629-2',
    fails: (r) =>
      r.ethObserved === '1' && !(oneOf(r.eth1, ['1', '2']) && oneOf(r.eth2, ['1', '2', '']) && [r.eth3, r.eth4, r.eth5].every(blank)),
  },
  { code: 'V629-3', fails: (r) => r.ethObserved === '2' && !oneOf(r.eth1, [...ETHNICITIES, '3']) && !(blank(r.eth1) && !blank(r.ethOther)) },
  { code: 'V630', fails: (r) => r.eth1 === '4' && r.ethObserved !== '3' },
  { code: 'V631-1', fails: (r) => !oneOf(r.coEth1, [...ETHNICITIES, '3', '4', '5']) && !(blank(r.coEth1) && !blank(r.coEthOther)) },
  { code: 'V631-2', fails: (r) => coEths(r).slice(1).some((v) => !blank(v) && !oneOf(v, ETHNICITIES)) },
  { code: 'V631-3', fails: (r) => hasDuplicate(coEths(r)) },
  { code: 'V631-4', fails: (r) => oneOf(r.coEth1, ['3', '4', '5']) && !laterAllBlank(coEths(r)) },
  { code: 'V632-1', fails: (r) => !oneOf(r.coEthObserved, ['1', '2', '3', '4']) },
  {
    code: 'V632-2',
    fails: (r) =>
      r.coEthObserved === '1' &&
      !(oneOf(r.coEth1, ['1', '2']) && oneOf(r.coEth2, ['1', '2', '']) && [r.coEth3, r.coEth4, r.coEth5].every(blank)),
  },
  { code: 'V632-3', fails: (r) => r.coEthObserved === '2' && !oneOf(r.coEth1, [...ETHNICITIES, '3']) && !(blank(r.coEth1) && !blank(r.coEthOther)) },
  { code: 'V633', fails: (r) => r.coEth1 === '4' && r.coEthObserved !== '3' },
  { code: 'V634', fails: (r) => (r.coEth1 === '5') !== (r.coEthObserved === '4') },

  { code: 'V635-1', fails: (r) => !oneOf(r.race1, [...RACES, '6', '7']) && !(blank(r.race1) && raceTextGiven(r)) },
  { code: 'V635-2', fails: (r) => races(r).slice(1).some((v) => !blank(v) && !oneOf(v, RACES)) },
  { code: 'V635-3', fails: (r) => hasDuplicate(races(r)) },
  { code: 'V635-4', fails: (r) => oneOf(r.race1, ['6', '7']) && !laterAllBlank(races(r)) },
  { code: 'V636-1', fails: (r) => !oneOf(r.raceObserved, ['1', '2', '3']) },
  {
    code: 'V636-2',
    fails: (r) => r.raceObserved === '1' && !(oneOf(r.race1, AGGREGATE_RACES) && races(r).slice(1).every((v) => blank(v) || oneOf(v, AGGREGATE_RACES))),
  },
  { code: 'V636-3', fails: (r) => r.raceObserved === '2' && !oneOf(r.race1, [...RACES, '6']) && !(blank(r.race1) && raceTextGiven(r)) },
  { code: 'V637', fails: (r) => r.race1 === '7' && r.raceObserved !== '3' },
  { code: 'V638-1', fails: (r) => !oneOf(r.coRace1, [...RACES, '6', '7', '8']) && !(blank(r.coRace1) && coRaceTextGiven(r)) },
  { code: 'V638-2', fails: (r) => coRaces(r).slice(1).some((v) => !blank(v) && !oneOf(v, RACES)) },
  { code: 'V638-3', fails: (r) => hasDuplicate(coRaces(r)) },
  { code: 'V638-4', fails: (r) => oneOf(r.coRace1, ['6', '7', '8']) && !laterAllBlank(coRaces(r)) },
  { code: 'V639-1', fails: (r) => !oneOf(r.coRaceObserved, ['1', '2', '3', '4']) },
  {
    code: 'V639-2',
    fails: (r) =>
      r.coRaceObserved === '1' && !(oneOf(r.coRace1, AGGREGATE_RACES) && coRaces(r).slice(1).every((v) => blank(v) || oneOf(v, AGGREGATE_RACES))),
  },
  { code: 'V639-3', fails: (r) => r.coRaceObserved === '2' && !oneOf(r.coRace1, [...RACES, '6']) && !(blank(r.coRace1) && coRaceTextGiven(r)) },
  { code: 'V640', fails: (r) => r.coRace1 === '7' && r.coRaceObserved !== '3' },
  { code: 'V641', fails: (r) => (r.coRace1 === '8') !== (r.coRaceObserved === '4') },

  { code: 'V642-1', fails: (r) => !oneOf(r.sex, ['1', '2', '3', '4', '6']) },
  { code: 'V642-2', fails: (r) => !oneOf(r.sexObserved, ['1', '2', '3']) },
  { code: 'V643', fails: (r) => r.sexObserved === '1' && !oneOf(r.sex, ['1', '2']) },
  { code: 'V644-1', fails: (r) => r.sexObserved === '2' && !oneOf(r.sex, ['1', '2', '3', '6']) },
  { code: 'V644-2', fails: (r) => r.sex === '6' && !oneOf(r.sexObserved, ['2', '3']) },
  { code: 'V645', fails: (r) => r.sex === '4' && r.sexObserved !== '3' },
  { code: 'V646-1', fails: (r) => !oneOf(r.coSex, ['1', '2', '3', '4', '5', '6']) },
  { code: 'V646-2', fails: (r) => !oneOf(r.coSexObserved, ['1', '2', '3', '4']) },
  { code: 'V647', fails: (r) => r.coSexObserved === '1' && !oneOf(r.coSex, ['1', '2']) },
  { code: 'V648-1', fails: (r) => r.coSexObserved === '2' && !oneOf(r.coSex, ['1', '2', '3', '6']) },
  { code: 'V648-2', fails: (r) => r.coSex === '6' && !oneOf(r.coSexObserved, ['2', '3']) },
  { code: 'V649', fails: (r) => r.coSex === '4' && r.coSexObserved !== '3' },
  { code: 'V650', fails: (r) => (r.coSexObserved === '4') !== (r.coSex === '5') },

  { code: 'V651-1', fails: (r) => !(isWhole(r.age) && Number(r.age) > 0) },
  { code: 'V651-2', fails: (r) => nonNaturalApplicant(r) && r.actionTaken !== '6' && r.age !== '8888' },
  { code: 'V652-1', fails: (r) => !(isWhole(r.coAge) && Number(r.coAge) > 0) },
  { code: 'V655-1', fails: (r) => nonNaturalApplicant(r) && r.actionTaken !== '6' && r.income !== 'NA' },
  { code: 'V721-1', fails: (r) => r.age !== '8888' && oneOf(r.age, ['9999', '1111']) },
  { code: 'V721-2', fails: (r) => r.coAge === '1111' },
];
