/** Money arithmetic: exact bigint cost vs a naive float computation (the baseline we refuse to use). */
import { costOfUsage, toPriceMicro } from '../src/money/index.js';
import { measure, printComparison } from './lib.js';

export default async function bench(): Promise<Record<string, unknown>> {
  const price = toPriceMicro({
    inputUsdPerMillion: 3,
    outputUsdPerMillion: 15,
    cachedInputUsdPerMillion: 0.3,
  });
  const usage = { inputTokens: 12_345, cachedInputTokens: 2_000, outputTokens: 987 };
  let sink = 0n;
  let floatSink = 0;
  const ours = await measure(
    () => {
      for (let i = 0; i < 1000; i++) sink += costOfUsage(usage, price);
    },
    { iterations: 200, warmup: 20 },
  );
  const baseline = await measure(
    () => {
      for (let i = 0; i < 1000; i++) floatSink += (10_345 * 3 + 2_000 * 0.3 + 987 * 15) / 1e6;
    },
    { iterations: 200, warmup: 20 },
  );
  printComparison(
    'cost of 1000 requests (bigint vs float)',
    ours.p50Ms * 1000,
    baseline.p50Ms * 1000,
    'µs',
  );
  return { costOf1000Requests: { ours, baseline }, checksum: `${sink}/${floatSink}` };
}
