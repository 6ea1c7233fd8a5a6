/**
 * The Vercel AI SDK (`ai` with `@ai-sdk/openai` and `@ai-sdk/anthropic`) as its users drive it:
 * `generateText` / `streamText` with tools and a step limit, `Output.object` for structured
 * output. The OpenAI provider's default model speaks the Responses API with `store` on, so its
 * tool loop's second step sends `item_reference` items (docs/decisions/173).
 */
import {
  type ClientDriver,
  type Endpoint,
  load,
  readTool,
  STRUCTURED_PROMPT,
  schemas,
  TEXT_PROMPT,
  TOOL_DESCRIPTION,
  TOOL_NAME,
  TOOL_PROMPT,
  type ToolLoopResult,
} from './shared.js';

/** A language model object of a provider (opaque here). */
type Model = object;

interface Step {
  toolCalls: unknown[];
}

interface Ai {
  generateText(options: Record<string, unknown>): Promise<{
    text: string;
    steps: Step[];
    output: unknown;
  }>;
  streamText(options: Record<string, unknown>): {
    textStream: AsyncIterable<string>;
    text: PromiseLike<string>;
    steps: PromiseLike<Step[]>;
  };
  tool(definition: Record<string, unknown>): unknown;
  stepCountIs(count: number): unknown;
  Output: { object(options: { schema: unknown }): unknown };
}

interface OpenAiProvider {
  (modelId: string): Model;
  chat(modelId: string): Model;
}
type AnthropicProvider = (modelId: string) => Model;

type ModelOf = (endpoint: Endpoint, model: string) => Promise<Model>;

/** `item_reference` items the OpenAI provider sent since the count was last reset. */
let itemReferences = 0;

/** The provider's own fetch, counting the `item_reference` items it sends. */
const countingFetch: typeof fetch = (input, init) => {
  if (typeof init?.body === 'string') {
    itemReferences += init.body.split('"item_reference"').length - 1;
  }
  return fetch(input, init);
};

async function openaiModel(endpoint: Endpoint, model: string, chat: boolean): Promise<Model> {
  const { createOpenAI } = await load<{
    createOpenAI(options: Record<string, unknown>): OpenAiProvider;
  }>('@ai-sdk/openai');
  const provider = createOpenAI({
    baseURL: endpoint.openaiBaseUrl,
    apiKey: endpoint.apiKey,
    fetch: countingFetch,
  });
  return chat ? provider.chat(model) : provider(model);
}

async function anthropicModel(endpoint: Endpoint, model: string): Promise<Model> {
  const { createAnthropic } = await load<{
    createAnthropic(options: Record<string, unknown>): AnthropicProvider;
  }>('@ai-sdk/anthropic');
  // The gateway reads its key from Authorization (authToken), the buyer reads none.
  const auth =
    endpoint.route === 'gateway' ? { authToken: endpoint.apiKey } : { apiKey: endpoint.apiKey };
  return createAnthropic({ baseURL: `${endpoint.anthropicBaseUrl}/v1`, ...auth })(model);
}

/** The errors `streamText` reports through `onError` instead of throwing. */
function failures(): { onError: (event: { error: unknown }) => void; check(): void } {
  const seen: unknown[] = [];
  return {
    onError: ({ error }) => {
      seen.push(error);
    },
    check: () => {
      if (seen.length > 0) throw seen[0];
    },
  };
}

function driver(
  name: string,
  path: ClientDriver['path'],
  modelOf: ModelOf,
  sendsItemReferences = false,
): ClientDriver {
  const ai = () => load<Ai>('ai');
  return {
    name,
    path,
    sendsItemReferences,
    async text(endpoint, model) {
      const { generateText } = await ai();
      const result = await generateText({
        model: await modelOf(endpoint, model),
        prompt: TEXT_PROMPT,
        maxRetries: 0,
        maxOutputTokens: 1024,
      });
      return result.text;
    },
    async stream(endpoint, model) {
      const { streamText } = await ai();
      const errors = failures();
      const result = streamText({
        model: await modelOf(endpoint, model),
        prompt: TEXT_PROMPT,
        maxRetries: 0,
        maxOutputTokens: 1024,
        onError: errors.onError,
      });
      let deltas = 0;
      for await (const delta of result.textStream) if (delta.length > 0) deltas++;
      errors.check();
      return { text: await result.text, deltas };
    },
    async toolLoop(endpoint, model, stream): Promise<ToolLoopResult> {
      const sdk = await ai();
      const { toolInput } = await schemas();
      const reads: string[] = [];
      const read = readTool(reads);
      itemReferences = 0;
      const options = {
        model: await modelOf(endpoint, model),
        prompt: TOOL_PROMPT,
        maxRetries: 0,
        maxOutputTokens: 1024,
        tools: {
          [TOOL_NAME]: sdk.tool({
            description: TOOL_DESCRIPTION,
            inputSchema: toolInput,
            execute: async (input: { path: string }) => read(input.path),
          }),
        },
        stopWhen: sdk.stepCountIs(5),
      };
      if (!stream) {
        const result = await sdk.generateText(options);
        return { reads, modelCalls: result.steps.length, text: result.text, itemReferences };
      }
      const errors = failures();
      const result = sdk.streamText({ ...options, onError: errors.onError });
      for await (const _delta of result.textStream) {
        // read to the end
      }
      errors.check();
      const steps = await result.steps;
      return { reads, modelCalls: steps.length, text: await result.text, itemReferences };
    },
    async structured(endpoint, model) {
      const { generateText, Output } = await ai();
      const { weather } = await schemas();
      const result = await generateText({
        model: await modelOf(endpoint, model),
        prompt: STRUCTURED_PROMPT,
        maxRetries: 0,
        maxOutputTokens: 1024,
        output: Output.object({ schema: weather }),
      });
      return result.output;
    },
  };
}

export const AI_SDK_DRIVERS: ClientDriver[] = [
  driver(
    'AI SDK, OpenAI provider (Responses API, default)',
    '/v1/responses',
    (e, m) => openaiModel(e, m, false),
    true,
  ),
  driver('AI SDK, OpenAI provider .chat()', '/v1/chat/completions', (e, m) =>
    openaiModel(e, m, true),
  ),
  driver('AI SDK, Anthropic provider', '/v1/messages', anthropicModel),
];
