/**
 * Varied traffic for bench/compare.bench.ts: every request a different prompt (0.5–4 KB of prose
 * and code), every answer a different ~1 KB completion with `usage`, so no cache flatters a
 * figure. Streamed answers are 200 chunks, each its own write.
 */

/**
 * Plain JavaScript shared by this process and the upstream process (`node -e`): a deterministic
 * PRNG (mulberry32) and `text(next, bytes)`, prose with code lines mixed in (quotes,
 * backslashes, tabs, newlines: real JSON escaping).
 */
const SHARED = `
const WORDS = ${JSON.stringify(
  'the buyer routes each request to a seller that answers within its budget while payment channels settle later and every peer keeps its own reputation of who served well under load across regions'.split(
    ' ',
  ),
)};
const CODE = ${JSON.stringify([
  'function total(items) {',
  '  return items.reduce((sum, item) => sum + item.price * item.quantity, 0);',
  '}',
  'const answer = await fetch(url, { method: "POST", body: JSON.stringify(payload) });',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: code quoted as prompt text
  'if (!answer.ok) throw new Error(`status ${answer.status}: ${await answer.text()}`);',
  'for (const [key, value] of Object.entries(config)) console.log(key, "=", value);',
  'export interface Offer { peerId: string; model: string; usdPerMillion: number }',
  '\tdef score(self, latency_ms: float) -> float:\n\t\treturn 1.0 / (1.0 + latency_ms / 250)',
])};
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
function text(next, bytes) {
  const parts = [];
  let length = 0;
  while (length < bytes) {
    const part = next() < 0.25
      ? '\\n' + CODE[Math.floor(next() * CODE.length)] + '\\n'
      : WORDS[Math.floor(next() * WORDS.length)] + ' ';
    parts.push(part);
    length += part.length;
  }
  return parts.join('').slice(0, bytes);
}
`;

const shared = new Function(`${SHARED}\nreturn { random, text };`)() as {
  random(seed: number): () => number;
  text(next: () => number, bytes: number): string;
};
export const { random, text } = shared;

/** Bodies with this `user` make the fake upstream wait 20 ms before answering. */
export const SLOW_USER = 'delay-20';

/** `count` distinct chat-completions bodies of 0.5–4 KB prompt each. */
export function requestBodies(count: number, stream: boolean, seed = 1, user?: string): string[] {
  const next = random(seed);
  return Array.from({ length: count }, (_, i) =>
    JSON.stringify({
      model: 'gpt-4o',
      messages: [
        { role: 'system', content: `Request ${i}: answer briefly.` },
        { role: 'user', content: text(next, 500 + Math.floor(next() * 3500)) },
      ],
      ...(stream ? { stream: true } : {}),
      ...(user ? { user } : {}),
    }),
  );
}

/** `count` distinct Anthropic messages bodies like requestBodies' (the translated lane). */
export function messagesBodies(count: number, seed = 3): string[] {
  const next = random(seed);
  return Array.from({ length: count }, (_, i) =>
    JSON.stringify({
      model: 'gpt-4o',
      max_tokens: 1024,
      system: `Request ${i}: answer briefly.`,
      messages: [{ role: 'user', content: text(next, 500 + Math.floor(next() * 3500)) }],
    }),
  );
}

/**
 * The fake OpenAI upstream, as a `node -e` script (plain JavaScript, no dependencies): each
 * answer is ~1 KB of different text with `usage`; a streamed answer is 200 chunks, each written
 * on its own turn of the event loop, then a usage chunk and `[DONE]`. A body whose `user` is
 * SLOW_USER is answered after 20 ms (the sustained lane's upstream time).
 */
export const UPSTREAM_SCRIPT = `
const { createServer } = require('node:http');
${SHARED}
let served = 0;
function handler(req, res) {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    if (body.includes('"user":"${SLOW_USER}"')) setTimeout(() => answer(req, res, body), 20);
    else answer(req, res, body);
  });
}
function answer(req, res, body) {
    const next = random(++served);
    const promptTokens = Math.ceil(body.length / 4);
    if (body.includes('"stream":true')) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      let i = 0;
      const step = () => {
        if (i < 200) {
          res.write('data: ' + JSON.stringify({
            id: 'chatcmpl-' + served, object: 'chat.completion.chunk', created: 1, model: 'gpt-4o',
            choices: [{ index: 0, delta: i === 0 ? { role: 'assistant', content: text(next, 5) } : { content: text(next, 5) }, finish_reason: null }],
          }) + '\\n\\n');
          i++;
          setImmediate(step);
          return;
        }
        res.write('data: ' + JSON.stringify({
          id: 'chatcmpl-' + served, object: 'chat.completion.chunk', created: 1, model: 'gpt-4o',
          choices: [{ index: 0, delta: {}, finish_reason: 'stop' }],
        }) + '\\n\\n');
        res.end('data: ' + JSON.stringify({
          id: 'chatcmpl-' + served, object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [],
          usage: { prompt_tokens: promptTokens, completion_tokens: 250, total_tokens: promptTokens + 250 },
        }) + '\\n\\ndata: [DONE]\\n\\n');
      };
      step();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({
      id: 'chatcmpl-' + served, object: 'chat.completion', created: 1, model: 'gpt-4o',
      choices: [{ index: 0, message: { role: 'assistant', content: text(next, 900 + Math.floor(next() * 200)) }, finish_reason: 'stop' }],
      usage: { prompt_tokens: promptTokens, completion_tokens: 250, total_tokens: promptTokens + 250 },
    }));
}
const server = createServer({ keepAliveTimeout: 60000 }, handler);
server.listen(0, '127.0.0.1', () => console.log('upstream port ' + server.address().port));
process.on('SIGTERM', () => process.exit(0));
`;
