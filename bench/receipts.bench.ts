/**
 * What receipts add to one request (docs/decisions/168-receipts-anyone-can-check.md), side by
 * side, in this one process: the seller's hashing of what it received and sent and its signature,
 * the buyer's hashing of what it sent and received, its trailer parse and its check. The bodies
 * are the compare bench's (bench/compareTraffic.ts: 0.5–4 KB prompts, a ~1 KB answer; streams of
 * 200 chunks). Each step is timed alone, many times; figures are p50 µs of CPU on one core.
 */
import { performance } from 'node:perf_hooks';
import { hexToBytes } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { PresignedSigner } from '../src/identity/index.js';
import {
  ExchangeHasher,
  receiptDigest,
  receiptIssuer,
  requestHash,
  responseHash,
  verifyReceipt,
} from '../src/network/index.js';
import { receiptFields } from '../src/network/receipts.js';
import { parseFrame, trailerSchema } from '../src/network/requestWire.js';
import { quickTrailer } from '../src/network/wireChecks.js';
import { requestBodies } from './compareTraffic.js';
import { printFigure } from './lib.js';

const ITERATIONS = Number(process.env.BENCH_RECEIPTS_ITERATIONS ?? 3000);
const encoder = new TextEncoder();

/** p50 in µs of `fn` over ITERATIONS calls (after a warm-up), each timed alone. */
function p50Micros(fn: (i: number) => unknown): number {
  for (let i = 0; i < 300; i++) fn(i);
  const samples: number[] = [];
  for (let i = 0; i < ITERATIONS; i++) {
    const start = performance.now();
    fn(i);
    samples.push(performance.now() - start);
  }
  samples.sort((a, b) => a - b);
  return Math.round(samples[Math.floor(samples.length / 2)]! * 1000 * 10) / 10;
}

export default async function bench(): Promise<Record<string, unknown>> {
  const sellerKey = generatePrivateKey();
  const seller = privateKeyToAccount(sellerKey).address.slice(2).toLowerCase();
  const buyer = privateKeyToAccount(generatePrivateKey()).address.slice(2).toLowerCase();
  const issue = receiptIssuer(sellerKey);
  const requests = requestBodies(64, false, 7).map((body) => encoder.encode(body));
  const answer = encoder.encode(
    JSON.stringify({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      choices: [{ index: 0, message: { role: 'assistant', content: 'word '.repeat(190) } }],
      usage: { prompt_tokens: 700, completion_tokens: 190, total_tokens: 890 },
    }),
  );
  const chunks = Array.from({ length: 200 }, (_, i) =>
    encoder.encode(`data: {"choices":[{"delta":{"content":"w${i} "}}]}\n\n`),
  );
  const claims = {
    usage: { inputTokens: 700, cachedInputTokens: 0, outputTokens: 190 },
    costMicroUsd: '5900',
  };
  const terms = {
    serviceId: 'gpt-4o',
    price: { inputMicroPerMillion: 2_500_000n, outputMicroPerMillion: 10_000_000n },
  };
  const path = '/v1/chat/completions';
  const fieldsOf = (i: number) =>
    receiptFields({
      seller,
      buyer,
      requestHash: requestHash('POST', path, requests[i % requests.length]!),
      responseHash: responseHash(200, answer),
      terms,
      claims,
      timeMs: Date.now(),
    });
  const receipts = requests.map((_, i) => issue(fieldsOf(i)));
  const trailers = receipts.map((receipt) =>
    encoder.encode(JSON.stringify({ ...claims, receipt })),
  );
  const bare = encoder.encode(JSON.stringify(claims));

  // The seller, per whole answer: both hashes, the fields, the digest and the signature.
  const sellerWhole = p50Micros((i) => issue(fieldsOf(i)));
  const sellerSign = p50Micros((i) => issue(receipts[i % receipts.length]!));
  const digest = p50Micros((i) => receiptDigest(receipts[i % receipts.length]!));
  // A loop this tight leaves the issuer no idle millisecond, so it signed directly above; the
  // seller's answers between requests take a presigned nonce (decision 195).
  const presigned = new PresignedSigner(hexToBytes(sellerKey), ITERATIONS + 300);
  await presigned.filled();
  const digestBytes = receipts.map((receipt) => hexToBytes(receiptDigest(receipt)));
  const presignedSign = p50Micros((i) => presigned.sign(digestBytes[i % digestBytes.length]!));
  const streamHash = p50Micros(() => {
    const hasher = ExchangeHasher.response(200);
    for (const chunk of chunks) hasher.update(chunk);
    return hasher.digest();
  });
  // The buyer, per whole answer: its trailer parsed with the receipt (less the bare trailer),
  // both hashes and the check with every expectation.
  const parseWith = p50Micros((i) =>
    parseFrame(trailerSchema, trailers[i % trailers.length]!, 'trailer', quickTrailer),
  );
  const parseBare = p50Micros(() => parseFrame(trailerSchema, bare, 'trailer', quickTrailer));
  const buyerCheck = p50Micros((i) => {
    const receipt = receipts[i % receipts.length]!;
    return verifyReceipt(receipt, {
      seller,
      buyer,
      serviceId: 'gpt-4o',
      requestHash: requestHash('POST', path, requests[i % requests.length]!),
      responseHash: responseHash(200, answer),
      claims,
      timeMs: { from: 0, to: Date.now() + 60_000 },
    });
  });
  const trailerBytes = trailers[0]!.byteLength - bare.byteLength;

  printFigure('seller: receipt of a whole answer (hashes, digest, signature)', sellerWhole, 'µs');
  printFigure('seller: of which the signature with its digest', sellerSign, 'µs');
  printFigure('seller: a signature from a presigned nonce (no digest)', presignedSign, 'µs');
  printFigure('either side: the EIP-712 digest alone', digest, 'µs');
  printFigure('either side: hashing a 200-chunk stream as it passes', streamHash, 'µs');
  printFigure('buyer: receipt check of a whole answer (hashes, recovery)', buyerCheck, 'µs');
  printFigure(
    'buyer: trailer parse with a receipt, more than without',
    parseWith - parseBare,
    'µs',
  );
  printFigure('trailer bytes the receipt adds', trailerBytes, 'B');
  return {
    iterations: ITERATIONS,
    sellerWholeMicros: sellerWhole,
    sellerSignMicros: sellerSign,
    presignedSignMicros: presignedSign,
    digestMicros: digest,
    streamHashMicros: streamHash,
    buyerCheckMicros: buyerCheck,
    buyerParseAddedMicros: Math.round((parseWith - parseBare) * 10) / 10,
    trailerBytesAdded: trailerBytes,
  };
}
