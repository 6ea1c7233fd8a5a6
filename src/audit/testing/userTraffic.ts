/**
 * Simulated users of one buyer, for the red-team suite and the indistinguishability bench: four
 * kinds of clients (the OpenAI SDK for Node, the OpenAI SDK for Python, a coding agent on the
 * messages API, a Responses agent) with their own headers, parameters, sizes and pace, writing
 * prompts from a corpus of their own. Nothing here is shared with the audit generator
 * (src/audit/generator/): audits must pass for this traffic without having been written from it.
 */

export type Random = () => number;

/** One request as the client sends it. */
export interface UserRequest {
  client: string;
  format: 'chat' | 'responses' | 'messages';
  path: string;
  headers: [string, string][];
  body: Record<string, unknown>;
  bytes: Uint8Array;
}

const pick = <T>(items: readonly T[], random: Random): T =>
  items[Math.floor(random() * items.length)]!;
const int = (random: Random, low: number, high: number) =>
  low + Math.floor(random() * (high - low + 1));

const ASKS = [
  'whats the difference between a mutex and a semaphore',
  'Summarize this email thread for me, keep it to bullet points',
  'can you rewrite this paragraph so it sounds less formal',
  'I need a regex that matches UK postcodes',
  'Explain like I am five: how does a vaccine work?',
  'My React component re-renders forever when I set state in useEffect, why?',
  'draft a polite reply declining the meeting on Thursday',
  'What are good names for a golden retriever puppy',
  'Translate "where is the train station" into Portuguese and Italian',
  'how many calories are in a banana and a cup of oat milk',
  'Write unit tests for the function below',
  'Why is my docker container exiting with code 137?',
  'compare postgres and mysql for a small saas app',
  'give me a 3 day itinerary for Kyoto in November',
  'fix the typo in my README and make the install section clearer',
  'Is 0.1 + 0.2 == 0.3 in JavaScript? why not',
  'What should I pack for a weekend of camping if it might rain',
  'Turn these meeting notes into action items with owners',
  'how do I undo the last git commit but keep the changes',
  'suggest a title for my blog post about burnout',
  'What does this stack trace mean',
  'write a haiku about monday mornings',
  'Please explain the CAP theorem with an example',
  'my sourdough is too dense, what am I doing wrong',
  'add pagination to this endpoint',
  'Can you make the SQL query below faster? it scans the whole table',
] as const;

const SNIPPETS = [
  'function total(items) {\n  let sum = 0;\n  for (const i of items) sum += i.price * i.qty;\n  return sum;\n}',
  'def load(path):\n    with open(path) as f:\n        return [json.loads(l) for l in f]',
  'SELECT * FROM orders o JOIN users u ON u.id = o.user_id WHERE o.created_at > NOW() - INTERVAL 7 DAY;',
  'useEffect(() => {\n  setCount(count + 1);\n});',
  'Traceback (most recent call last):\n  File "app.py", line 42, in <module>\n    main()\nKeyError: \'user_id\'',
  'app.get("/items", async (req, res) => {\n  const rows = await db.all("select * from items");\n  res.json(rows);\n});',
] as const;

const SYSTEMS = [
  'You are a helpful assistant.',
  'You are a concise assistant. Answer briefly and accurately.',
  'You are an expert programmer. When you show code, use fenced code blocks and explain the change.',
  'You help the marketing team write copy. Keep a warm tone, avoid jargon, and never promise discounts.',
] as const;

const AGENT_TOOLS = ['Read', 'Write', 'Edit', 'Bash', 'Glob', 'Grep'].map((name) => ({
  name,
  description: `${name} tool. ${'Use it carefully; paths are absolute and output may be truncated. '.repeat(6)}`,
  input_schema: {
    type: 'object',
    properties: {
      file_path: { type: 'string', description: 'The absolute path to the file' },
      command: { type: 'string', description: 'The command to execute' },
    },
    required: ['file_path'],
  },
}));

const AGENT_SYSTEM = `You are an interactive CLI tool that helps users with software engineering tasks. ${'Follow the repository conventions, keep changes small, run the tests, and explain what you did. '.repeat(40)}\nWorking directory: /home/dev/shop-api\nIs directory a git repo: Yes\nPlatform: linux`;

const NAMES = ['Priya', 'Tom', 'Ana', 'Kenji', 'Lea', 'Omar', 'Sofia', 'Ben', 'Ines', 'Dmitri'];
const THINGS = [
  'the orders API',
  'our Stripe webhook',
  'the Jenkins job',
  'my thesis draft',
  'the landing page',
  'a Slack bot',
  'the nightly backup',
  'my resume',
  'the invoice PDF',
  'the k8s deployment',
];

/** A snippet of code or output with its names and numbers changed, as no two users paste the same. */
function snippet(random: Random): string {
  const n = int(random, 2, 9000);
  const name = pick(['user', 'order', 'item', 'row', 'job', 'file'], random);
  return pick(SNIPPETS, random)
    .replace(/\b(items|rows|user_id|count)\b/g, `${name}s`)
    .replace(/\b42\b|\b7\b/g, String(n));
}

function askText(random: Random): string {
  let text: string = pick(ASKS, random);
  if (random() < 0.3)
    text = `${pick(['Hi! ', 'Quick one: ', 'Hey, ', '', 'ok so ', 'Question - '], random)}${text}`;
  if (random() < 0.3) text += ` It's for ${pick(THINGS, random)}.`;
  if (random() < 0.2)
    text += ` ${pick(NAMES, random)} asked me to check by ${pick(['Friday', 'tomorrow', 'noon', 'next week'], random)}.`;
  if (random() < 0.35) text += `\n\n\`\`\`\n${snippet(random)}\n\`\`\``;
  if (random() < 0.15)
    text += `\n\nVersion ${int(random, 1, 20)}.${int(random, 0, 40)} on ${pick(['macOS', 'Ubuntu 24.04', 'Windows 11', 'Debian'], random)}.`;
  return text;
}

function stainless(lang: 'js' | 'python', version: string): [string, string][] {
  return lang === 'js'
    ? [
        ['accept', 'application/json'],
        ['user-agent', `OpenAI/JS ${version}`],
        ['x-stainless-retry-count', '0'],
        ['x-stainless-lang', 'js'],
        ['x-stainless-package-version', version],
        ['x-stainless-os', 'MacOS'],
        ['x-stainless-arch', 'arm64'],
        ['x-stainless-runtime', 'node'],
        ['x-stainless-runtime-version', 'v22.12.0'],
        ['content-type', 'application/json'],
        ['accept-language', '*'],
        ['sec-fetch-mode', 'cors'],
        ['accept-encoding', 'gzip, deflate'],
      ]
    : [
        ['accept-encoding', 'gzip, deflate'],
        ['accept', 'application/json'],
        ['content-type', 'application/json'],
        ['user-agent', `OpenAI/Python ${version}`],
        ['x-stainless-lang', 'python'],
        ['x-stainless-package-version', version],
        ['x-stainless-os', 'Linux'],
        ['x-stainless-arch', 'x64'],
        ['x-stainless-runtime', 'CPython'],
        ['x-stainless-runtime-version', '3.12.4'],
        ['x-stainless-retry-count', '0'],
      ];
}

const spacedJson = (value: unknown) =>
  JSON.stringify(value).replace(/","/g, '", "').replace(/":/g, '": ');

function chatRequest(random: Random, python: boolean): UserRequest {
  const messages: Record<string, unknown>[] = [];
  if (random() < 0.5) messages.push({ role: 'system', content: pick(SYSTEMS, random) });
  const turns = random() < 0.3 ? int(random, 1, 3) : 0;
  for (let i = 0; i < turns; i++) {
    messages.push({ role: 'user', content: askText(random) });
    messages.push({
      role: 'assistant',
      content: `${pick(ASKS, random)}. `.repeat(int(random, 1, 4)),
    });
  }
  messages.push({ role: 'user', content: askText(random) });
  const body: Record<string, unknown> = { model: 'svc-demo-smart', messages };
  if (random() < 0.3) body.temperature = pick([0.2, 0.7, 1], random);
  if (random() < 0.4) body.max_tokens = pick([256, 512, 1024], random);
  if (random() < 0.3) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return {
    client: python ? 'python-chat' : 'sdk-chat',
    format: 'chat',
    path: '/v1/chat/completions',
    headers: stainless(python ? 'python' : 'js', python ? '1.54.3' : '6.9.1'),
    body,
    bytes: new TextEncoder().encode(python ? spacedJson(body) : JSON.stringify(body)),
  };
}

function agentRequest(random: Random, step: number): UserRequest {
  const messages: Record<string, unknown>[] = [
    { role: 'user', content: [{ type: 'text', text: askText(random) }] },
  ];
  for (let i = 0; i < step; i++) {
    const id = `toolu_01${Math.floor(random() * 1e12).toString(36)}${Math.floor(random() * 1e12).toString(36)}`;
    messages.push({
      role: 'assistant',
      content: [
        { type: 'text', text: 'Let me look at the file first.' },
        {
          type: 'tool_use',
          id,
          name: 'Read',
          input: { file_path: `/home/dev/shop-api/src/route${i}.ts` },
        },
      ],
    });
    messages.push({
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: id,
          content: Array.from({ length: int(random, 1, 6) }, () => snippet(random)).join('\n\n'),
        },
      ],
    });
  }
  const body = {
    model: 'svc-demo-smart',
    max_tokens: 32000,
    system: [{ type: 'text', text: AGENT_SYSTEM, cache_control: { type: 'ephemeral' } }],
    messages,
    tools: AGENT_TOOLS,
    metadata: { user_id: 'user_4f2a9c0d81e7b3a6f5d2c1e0b9a8d7c6_session_71b2' },
    stream: true,
  };
  return {
    client: 'agent-messages',
    format: 'messages',
    path: '/v1/messages',
    headers: [
      ['accept', 'application/json'],
      ['anthropic-beta', 'claude-code-20250219,interleaved-thinking-2025-05-14'],
      ['anthropic-version', '2023-06-01'],
      ['content-type', 'application/json'],
      ['user-agent', 'claude-cli/2.1.197 (external, cli)'],
      ['x-app', 'cli'],
      ['x-stainless-lang', 'js'],
      ['x-stainless-package-version', '0.71.0'],
      ['accept-encoding', 'gzip, deflate'],
    ],
    body,
    bytes: new TextEncoder().encode(JSON.stringify(body)),
  };
}

function responsesRequest(random: Random): UserRequest {
  const input: Record<string, unknown>[] = [
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: askText(random) }] },
  ];
  const body = {
    model: 'svc-demo-smart',
    instructions: `${pick(SYSTEMS, random)} ${'Prefer small diffs and explain them. '.repeat(30)}`,
    input,
    tools: [
      {
        type: 'function',
        name: 'shell',
        description: 'Runs a shell command and returns its output.',
        parameters: {
          type: 'object',
          properties: { command: { type: 'array', items: { type: 'string' } } },
          required: ['command'],
        },
        strict: false,
      },
    ],
    tool_choice: 'auto',
    parallel_tool_calls: false,
    store: false,
    stream: true,
    include: ['reasoning.encrypted_content'],
  };
  return {
    client: 'responses-agent',
    format: 'responses',
    path: '/v1/responses',
    headers: stainless('js', '6.9.1'),
    body,
    bytes: new TextEncoder().encode(JSON.stringify(body)),
  };
}

/** A user's request with its arrival time (ms). */
export interface TimedRequest {
  at: number;
  request: UserRequest;
}

/**
 * `count` requests of one buyer's users from `start`: sessions of one client kind, chat sessions
 * a few requests tens of seconds apart, agent sessions several steps seconds apart, idle minutes
 * between sessions.
 */
export function userTraffic(count: number, random: Random, start = 0): TimedRequest[] {
  const out: TimedRequest[] = [];
  let at = start;
  while (out.length < count) {
    const kind = random();
    const steps = kind < 0.4 ? int(random, 1, 4) : int(random, 2, 8);
    for (let step = 0; step < steps && out.length < count; step++) {
      const request =
        kind < 0.25
          ? chatRequest(random, false)
          : kind < 0.4
            ? chatRequest(random, true)
            : kind < 0.75
              ? agentRequest(random, step)
              : responsesRequest(random);
      out.push({ at, request });
      at += kind < 0.4 ? int(random, 8_000, 90_000) : int(random, 1_500, 9_000);
    }
    at += int(random, 60_000, 900_000);
  }
  return out;
}
