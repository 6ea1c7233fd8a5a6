/**
 * The red team (docs/guide/trust.md): sellers that read svc's code and answer with the
 * model they announce only when a request looks like an audit, each by one of the tells earlier
 * audits had or a seller could try. Each is a rule over what the seller sees of a request
 * (src/audit/testing/demoMarket.ts `SellerView`); every other request gets a cheaper model.
 */
import type { HonestWhen, SellerView } from './demoMarket.js';

/** The canary prompts svc's earlier audits sent (templates × subjects), as a seller kept them. */
const OLD_CANARY_TEMPLATES = [
  'In one sentence, what is',
  'Name three facts about',
  'Write a short line of verse about',
  'to a ten-year-old in two sentences',
  'Give one surprising use of',
  'using exactly five words',
];
const OLD_CANARY_SUBJECTS = [
  'a lighthouse',
  'photosynthesis',
  'the number seven',
  'a river delta',
  'binary search',
  'volcanic glass',
  'a paper map',
  'tidal power',
  'the colour teal',
  'a sourdough starter',
  'magnetism',
  'an old clock tower',
  'compound interest',
  'a mountain hut',
  'the speed of sound',
  'beeswax',
];

const text = (view: SellerView) => new TextDecoder().decode(view.body);

/** Messages (or input items) of a request. */
function turnsOf(view: SellerView): unknown[] {
  const { messages, input } = view.json;
  if (Array.isArray(messages)) return messages;
  if (Array.isArray(input)) return input;
  return typeof input === 'string' ? [input] : [];
}

export const EVADERS: Record<string, HonestWhen> = {
  /** Honest when the prompt holds one of the old canaries. */
  canaryList: (view) => {
    const body = text(view);
    return (
      OLD_CANARY_TEMPLATES.some((template) => body.includes(template)) ||
      OLD_CANARY_SUBJECTS.some((subject) => body.includes(subject))
    );
  },
  /** Honest for the shape of the old audits: one user message, no system prompt, no tools, a small cap. */
  requestShape: (view) => {
    const json = view.json;
    const maxTokens = json.max_tokens ?? json.max_output_tokens ?? json.max_completion_tokens;
    return (
      turnsOf(view).length === 1 &&
      json.system === undefined &&
      json.instructions === undefined &&
      json.tools === undefined &&
      typeof maxTokens === 'number' &&
      maxTokens <= 128
    );
  },
  /** Honest when a request sets a seed, an explicit temperature of 0 or 1, or the old cap of 96. */
  parameters: (view) => {
    const json = view.json;
    return (
      json.seed !== undefined ||
      json.temperature === 0 ||
      json.temperature === 1 ||
      json.max_tokens === 96 ||
      json.max_output_tokens === 96
    );
  },
  /** Honest inside bursts: two or more of this buyer's requests in the two seconds before. */
  timing: (view) => view.earlier.filter((at) => view.at - at <= 2_000).length >= 2,
  /** Honest on a new channel: its first ten minutes. */
  newChannels: (view) => view.at - view.channelOpenedAt < 10 * 60_000,
  /** Honest on a channel's first 40 requests, cheap after. */
  firstRequests: (view) => view.channelRequests < 40,
};

/** A request with every string replaced by its length: what a probe copies exactly. */
function lengthsOf(value: unknown): unknown {
  if (typeof value === 'string') return value.length;
  if (Array.isArray(value)) return value.map(lengthsOf);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, lengthsOf(item)]));
  }
  return value;
}

/**
 * A seller that remembers what it served (docs/guide/trust.md "What a seller saw before"): honest
 * when a request of a buyer has, string for string, the lengths of one it served that buyer
 * before. A probe copied from a request the seller served always has. An open limit: this
 * evader passes audits (src/audit/redteam.test.ts).
 */
export function rememberingLengths(): HonestWhen {
  const seen = new Set<string>();
  return (view) => {
    const fingerprint = `${view.identity} ${view.path} ${JSON.stringify(lengthsOf(view.json))}`;
    const again = seen.has(fingerprint);
    seen.add(fingerprint);
    return again;
  };
}
