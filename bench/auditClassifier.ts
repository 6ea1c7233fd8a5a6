/**
 * Can a seller tell audits from the buyer's own traffic? Features of every request a seller sees
 * (src/audit/testing/demoMarket.ts `SellerView`): sizes, parameters, headers, JSON style,
 * timing, and shallow statistics of the text (word length, digits, capitals, punctuation, line
 * breaks, question marks). Two classifiers are trained on them, logistic regression and boosted
 * decision stumps, on balanced classes, and scored on held-out requests: 50 % is a coin toss.
 */
import type { SellerView } from '../src/audit/testing/demoMarket.js';

type Random = () => number;

const log1p = (x: number) => Math.log(1 + Math.max(0, x));

function texts(value: unknown, out: string[]): void {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const item of value) texts(item, out);
  else if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) if (key !== 'model') texts(item, out);
  }
}

const AGENTS = ['OpenAI/JS', 'OpenAI/Python', 'claude-cli', 'Anthropic/JS'];

/** How many of the features are of shape, parameters, headers and timing (the rest are of the text). */
export const SHAPE_FEATURES = 19;

/** The features of one request, as the seller sees it; `previous` is the seller's last arrival. */
export function features(view: SellerView, previous: number | undefined): number[] {
  const json = view.json;
  const turns = (json.messages ?? json.input) as unknown;
  const turnList = Array.isArray(turns) ? turns : [];
  const all: string[] = [];
  texts(json.messages ?? json.input ?? '', all);
  const text = all.join('\n');
  const last = turnList.at(-1);
  const lastText: string[] = [];
  texts(last ?? '', lastText);
  const systemText: string[] = [];
  texts(json.system ?? json.instructions ?? '', systemText);
  const words = text.split(/\s+/).filter(Boolean);
  const chars = Math.max(1, text.length);
  const count = (pattern: RegExp) => (text.match(pattern) ?? []).length;
  const agent = view.headers.find(([name]) => name === 'user-agent')?.[1] ?? '';
  const maxTokens = json.max_tokens ?? json.max_output_tokens ?? json.max_completion_tokens;
  const rawHead = new TextDecoder().decode(view.body.subarray(0, 32));
  return [
    log1p(view.body.byteLength),
    view.headers.length,
    ...AGENTS.map((family) => (agent.startsWith(family) ? 1 : 0)),
    view.path.endsWith('/chat/completions') ? 1 : 0,
    view.path.endsWith('/responses') ? 1 : 0,
    json.stream === true ? 1 : 0,
    typeof json.temperature === 'number' ? 1 : 0,
    typeof json.temperature === 'number' ? json.temperature : 0,
    typeof maxTokens === 'number' ? log1p(maxTokens) : 0,
    Array.isArray(json.tools) ? json.tools.length : 0,
    turnList.length,
    log1p(systemText.join('').length),
    log1p(lastText.join('').length),
    log1p(text.length),
    /": /.test(rawHead) ? 1 : 0,
    previous === undefined ? 0 : log1p(view.at - previous),
    words.length === 0 ? 0 : words.reduce((sum, word) => sum + word.length, 0) / words.length,
    count(/[0-9]/g) / chars,
    count(/[A-Z]/g) / chars,
    count(/[.,;:!?'"()[\]{}]/g) / chars,
    count(/\n/g) / chars,
    (count(/\?/g) * 100) / chars,
    count(/```/g) > 0 ? 1 : 0,
  ];
}

interface Example {
  x: number[];
  y: number;
}

function standardise(train: Example[], test: Example[]): void {
  const width = train[0]!.x.length;
  for (let j = 0; j < width; j++) {
    const values = train.map((example) => example.x[j]!);
    const mean = values.reduce((a, b) => a + b, 0) / values.length;
    const sd = Math.sqrt(values.reduce((a, b) => a + (b - mean) ** 2, 0) / values.length) || 1;
    for (const example of [...train, ...test]) example.x[j] = (example.x[j]! - mean) / sd;
  }
}

function logistic(train: Example[], test: Example[]): number {
  const width = train[0]!.x.length;
  const w = new Array<number>(width + 1).fill(0);
  const predict = (x: number[]) => {
    let z = w[width]!;
    for (let j = 0; j < width; j++) z += w[j]! * x[j]!;
    return 1 / (1 + Math.exp(-z));
  };
  for (let epoch = 0; epoch < 300; epoch++) {
    const gradient = new Array<number>(width + 1).fill(0);
    for (const { x, y } of train) {
      const error = predict(x) - y;
      for (let j = 0; j < width; j++) gradient[j]! += error * x[j]!;
      gradient[width]! += error;
    }
    for (let j = 0; j <= width; j++) w[j]! -= (0.5 * gradient[j]!) / train.length + 0.0005 * w[j]!;
  }
  return accuracy(test, (x) => (predict(x) >= 0.5 ? 1 : 0));
}

/** AdaBoost over decision stumps (one feature, one threshold each). */
function boostedStumps(train: Example[], test: Example[], rounds = 60): number {
  const width = train[0]!.x.length;
  let weights = train.map(() => 1 / train.length);
  const stumps: { feature: number; threshold: number; sign: number; alpha: number }[] = [];
  for (let round = 0; round < rounds; round++) {
    let best = { feature: 0, threshold: 0, sign: 1, error: Number.POSITIVE_INFINITY };
    for (let feature = 0; feature < width; feature++) {
      const values = [...new Set(train.map((example) => example.x[feature]!))].sort(
        (a, b) => a - b,
      );
      const step = Math.max(1, Math.floor(values.length / 24));
      for (let i = 0; i < values.length; i += step) {
        const threshold = values[i]!;
        for (const sign of [1, -1]) {
          let error = 0;
          train.forEach((example, index) => {
            const guess =
              (example.x[feature]! > threshold ? 1 : 0) === (sign === 1 ? 1 : 0) ? 1 : 0;
            if (guess !== example.y) error += weights[index]!;
          });
          if (error < best.error) best = { feature, threshold, sign, error };
        }
      }
    }
    const error = Math.min(Math.max(best.error, 1e-9), 1 - 1e-9);
    const alpha = 0.5 * Math.log((1 - error) / error);
    stumps.push({ ...best, alpha });
    const vote = (x: number[]) =>
      x[best.feature]! > best.threshold === (best.sign === 1) ? 1 : -1;
    weights = train.map(
      (example, index) =>
        weights[index]! * Math.exp(-alpha * (example.y === 1 ? 1 : -1) * vote(example.x)),
    );
    const total = weights.reduce((a, b) => a + b, 0);
    weights = weights.map((weight) => weight / total);
  }
  return accuracy(test, (x) => {
    let score = 0;
    for (const stump of stumps) {
      score += stump.alpha * (x[stump.feature]! > stump.threshold === (stump.sign === 1) ? 1 : -1);
    }
    return score >= 0 ? 1 : 0;
  });
}

function accuracy(test: Example[], predict: (x: number[]) => number): number {
  let right = 0;
  for (const example of test) if (predict(example.x) === example.y) right++;
  return right / test.length;
}

function shuffle<T>(items: T[], random: Random): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

export interface ClassifierResult {
  probes: number;
  userRequests: number;
  /** Held-out accuracy per split, and their mean. */
  logisticRegression: { accuracy: number; splits: number[] };
  boostedStumps: { accuracy: number; splits: number[] };
}

/** Trains and scores both classifiers on `views` (one seller's), over `splits` random 70/30 splits. */
export function classify(
  views: readonly SellerView[],
  random: Random,
  options: { splits?: number; shapeOnly?: boolean } = {},
): ClassifierResult {
  const splits = options.splits ?? 5;
  const examples: Example[] = views.map((view, index) => {
    const all = features(view, views[index - 1]?.at);
    return { x: options.shapeOnly ? all.slice(0, SHAPE_FEATURES) : all, y: view.probe ? 1 : 0 };
  });
  const probes = examples.filter((example) => example.y === 1);
  const users = examples.filter((example) => example.y === 0);
  const size = Math.min(probes.length, users.length);
  const logisticSplits: number[] = [];
  const stumpSplits: number[] = [];
  for (let split = 0; split < splits; split++) {
    const balanced = shuffle(
      [...shuffle(probes, random).slice(0, size), ...shuffle(users, random).slice(0, size)],
      random,
    );
    const cut = Math.floor(balanced.length * 0.7);
    const train = balanced.slice(0, cut).map((example) => ({ ...example, x: [...example.x] }));
    const test = balanced.slice(cut).map((example) => ({ ...example, x: [...example.x] }));
    standardise(train, test);
    logisticSplits.push(logistic(train, test));
    stumpSplits.push(boostedStumps(train, test));
  }
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  return {
    probes: probes.length,
    userRequests: users.length,
    logisticRegression: { accuracy: mean(logisticSplits), splits: logisticSplits },
    boostedStumps: { accuracy: mean(stumpSplits), splits: stumpSplits },
  };
}
