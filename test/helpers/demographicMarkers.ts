/**
 * Demographics chosen so that their words appear nowhere else in the service's data: finding one
 * of DEMOGRAPHIC_MARKERS outside application_demographics (or, sealed, anywhere) means they leaked.
 */
import type { components } from '../../generated/api.d.ts';

export const MARKED_DEMOGRAPHICS = {
  ethnicity: ['puerto_rican', 'cuban'],
  race: ['guamanian_or_chamorro', 'samoan'],
  sex: 'male_and_female',
  age: 117,
  collectedOnVisualObservation: true,
} satisfies components['schemas']['DemographicsInput'];

export const DEMOGRAPHIC_MARKERS = ['guamanian_or_chamorro', 'samoan', 'puerto_rican', 'male_and_female', 'collectedOnVisualObservation'];
