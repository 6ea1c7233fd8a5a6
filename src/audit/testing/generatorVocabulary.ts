/**
 * What a seller who has read svc's audit generator can look for (src/audit/generator/words.ts):
 * its fixed phrases. The audit bench runs such a seller to show the limit docs/guide/trust.md
 * states: a seller matching prompts against the public generator's vocabulary tells
 * audits from traffic.
 */
import { ACTIONS, PERSONAS, PROBLEMS, RULES, SITUATIONS, TOPICS } from '../generator/words.js';

export const SELLER_VIEW_PHRASES: readonly string[] = [
  ...TOPICS,
  ...PERSONAS,
  ...RULES,
  ...PROBLEMS,
  ...SITUATIONS,
  ...ACTIONS,
];
