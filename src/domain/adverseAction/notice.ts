/**
 * A notice of action taken (ECOA / Regulation B, 12 CFR 1002.9) for a declined application: what
 * it says, as plain data, before it is rendered (./renderHtml.ts, ./renderPdf.ts). Built only from
 * the application's decision, its applicant's name, its credit score and the lender: never from the
 * applicant's demographic information.
 */
import type { NoticeReason } from './reasons.ts';

/** Due within 30 days of the decision (12 CFR 1002.9(a)(1)(i)). */
const NOTICE_DUE_DAYS = 30;
/** A reminder when this many days have passed and it is still not delivered. */
const NOTICE_REMINDER_DAYS = 25;
const DAY_MS = 86_400_000;

/** The FICO range the service takes credit scores in (the contract's creditScore bounds). */
const SCORE_RANGE = { low: 300, high: 850 } as const;

/**
 * The FCRA §609(f) / §615(a) credit score disclosure. The service holds only the score the
 * application carries: the key factors, the date the score was created and the agency that
 * provided it come from the consumer report, which the lender adds by hand (null here).
 */
export interface ScoreDisclosure {
  score: number;
  rangeLow: number;
  rangeHigh: number;
  keyFactors: string[];
  scoredAt: string | null;
  source: string | null;
}

interface NoticeLender {
  name: string;
  address: { street: string; city: string; state: string; zip: string } | null;
  /** The agency the ECOA statement names, null when the lender set none. */
  ecoaAgency: string | null;
}

export interface NoticeContent {
  noticeId: string;
  mortgageId: string;
  applicantName: string;
  amount: number;
  action: 'declined';
  decidedBy: 'underwriting_rules' | 'reviewer';
  decidedAt: string;
  dueAt: string;
  reasons: NoticeReason[];
  scoreDisclosure: ScoreDisclosure | null;
  lender: NoticeLender;
}

/**
 * The ECOA notice of 12 CFR 1002.9(b)(1) (the model wording of 1002.9(b)(1)), ending with the
 * federal agency of appendix A that administers compliance for this creditor: the lender states it
 * in its settings, since it follows the lender's charter and size and the agencies move.
 */
const ECOA_NOTICE =
  'The Federal Equal Credit Opportunity Act prohibits creditors from discriminating against credit applicants on the basis of ' +
  'race, color, religion, national origin, sex, marital status, age (provided the applicant has the capacity to enter into a ' +
  "binding contract); because all or part of the applicant's income derives from any public assistance program; or because the " +
  'applicant has in good faith exercised any right under the Consumer Credit Protection Act. The Federal agency that administers ' +
  'compliance with this law concerning this creditor is ';

/** What the notices made before the lender could state its agency named (the API reports it for them). */
export const ECOA_AGENCY_BEFORE_SETTINGS = 'Bureau of Consumer Financial Protection, 1700 G Street NW, Washington, DC 20552';

function ecoaNotice(agency: string | null): string {
  if (agency === null) return `${ECOA_NOTICE}not set: the lender names it in the dashboard's settings.`;
  return `${ECOA_NOTICE}${agency}${agency.endsWith('.') ? '' : '.'}`;
}

/** The FCRA §615(a) statement that goes with a score used in the decision. */
const FCRA_NOTICE =
  'Our credit decision was based in whole or in part on information obtained in a report from a consumer reporting agency. ' +
  'You have a right under the Fair Credit Reporting Act to know the information contained in your credit file at the consumer ' +
  'reporting agency. The reporting agency played no part in our decision and is unable to supply specific reasons why we have ' +
  'denied credit to you. You also have a right to a free copy of your report from the reporting agency, if you request it no ' +
  'later than 60 days after you receive this notice. In addition, if you find that any information contained in the report you ' +
  'receive is inaccurate or incomplete, you have the right to dispute the matter with the reporting agency.';

const NOT_SUPPLIED = 'not supplied to this service: see the consumer report';

/** When a notice decided at `decidedAt` is due, and when its reminder falls. */
export function noticeDates(decidedAt: string): { dueAt: string; remindAt: string } {
  const at = Date.parse(decidedAt);
  return { dueAt: new Date(at + NOTICE_DUE_DAYS * DAY_MS).toISOString(), remindAt: new Date(at + NOTICE_REMINDER_DAYS * DAY_MS).toISOString() };
}

/** The disclosure for a score the decision used. */
export function scoreDisclosureOf(score: number): ScoreDisclosure {
  return { score, rangeLow: SCORE_RANGE.low, rangeHigh: SCORE_RANGE.high, keyFactors: [], scoredAt: null, source: null };
}

/** The notice's sections as lines of text, in order: what the HTML and the PDF both render. */
export interface NoticeSection {
  heading: string | null;
  lines: string[];
}

const dateOf = (iso: string) => iso.slice(0, 10);

export function noticeSections(n: NoticeContent): NoticeSection[] {
  const address = n.lender.address;
  const sections: NoticeSection[] = [
    {
      heading: null,
      lines: [n.lender.name, ...(address ? [address.street, `${address.city}, ${address.state} ${address.zip}`] : ["Lender's address not set (the dashboard's settings)"])],
    },
    { heading: 'Notice of action taken', lines: [`Date: ${dateOf(n.decidedAt)}`, `Applicant: ${n.applicantName}`, `Application: ${n.mortgageId}`] },
    {
      heading: 'Action taken',
      lines: [`Thank you for your recent application for a mortgage loan of ${n.amount.toFixed(2)} USD. We are unable to approve it: your application is declined.`],
    },
    { heading: 'Principal reason(s) for denial of credit', lines: n.reasons.map((r) => `- ${r.text}`) },
  ];
  if (n.scoreDisclosure) {
    const s = n.scoreDisclosure;
    sections.push({
      heading: 'Your credit score',
      lines: [
        FCRA_NOTICE,
        `Your credit score: ${s.score}`,
        `Scores range from a low of ${s.rangeLow} to a high of ${s.rangeHigh}.`,
        `Key factors that adversely affected your credit score: ${s.keyFactors.length > 0 ? s.keyFactors.join('; ') : NOT_SUPPLIED}`,
        `Date: ${s.scoredAt ?? NOT_SUPPLIED}`,
        `Source: ${s.source ?? NOT_SUPPLIED}`,
      ],
    });
  }
  sections.push({ heading: 'Notice', lines: [ecoaNotice(n.lender.ecoaAgency)] });
  return sections;
}
