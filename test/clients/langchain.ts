/**
 * LangChain JS (`@langchain/openai`, `@langchain/anthropic`) as its users drive it: `invoke` and
 * `stream`, `bindTools` with the tool loop written out (call, run the tool, answer with a
 * `ToolMessage`), `withStructuredOutput(schema, { method: 'jsonSchema' })`. `ChatOpenAI` runs
 * over chat completions and, with `useResponsesApi`, over the Responses API.
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

interface ToolCall {
  id?: string;
  name: string;
  args: Record<string, unknown>;
}

interface AiMessage {
  text: string;
  tool_calls?: ToolCall[];
}

interface AiChunk extends AiMessage {
  concat(chunk: AiChunk): AiChunk;
}

interface Runnable<In, Out> {
  invoke(input: In): Promise<Out>;
  stream(input: In): Promise<AsyncIterable<AiChunk>>;
}

interface ChatModel extends Runnable<unknown, AiMessage> {
  bindTools(tools: unknown[]): Runnable<unknown[], AiMessage>;
  withStructuredOutput(
    schema: unknown,
    options: { method: 'jsonSchema' },
  ): Runnable<string, unknown>;
}

type ModelOf = (endpoint: Endpoint, model: string) => Promise<ChatModel>;

interface Messages {
  HumanMessage: new (content: string) => object;
}

async function chatOpenAi(endpoint: Endpoint, model: string, responses: boolean) {
  const { ChatOpenAI } = await load<{
    ChatOpenAI: new (fields: Record<string, unknown>) => ChatModel;
  }>('@langchain/openai');
  return new ChatOpenAI({
    model,
    apiKey: endpoint.apiKey,
    configuration: { baseURL: endpoint.openaiBaseUrl },
    useResponsesApi: responses,
    maxRetries: 0,
  });
}

async function chatAnthropic(endpoint: Endpoint, model: string) {
  const { ChatAnthropic } = await load<{
    ChatAnthropic: new (fields: Record<string, unknown>) => ChatModel;
  }>('@langchain/anthropic');
  return new ChatAnthropic({
    model,
    apiKey: endpoint.apiKey,
    anthropicApiUrl: endpoint.anthropicBaseUrl,
    maxRetries: 0,
    // The gateway reads its key from Authorization (the SDK sends the api key as x-api-key).
    ...(endpoint.route === 'gateway'
      ? { clientOptions: { defaultHeaders: { authorization: `Bearer ${endpoint.apiKey}` } } }
      : {}),
  });
}

/** The whole message of a stream: its chunks concatenated. */
async function collect(
  chunks: AsyncIterable<AiChunk>,
): Promise<{ message: AiMessage; deltas: number }> {
  let message: AiChunk | undefined;
  let deltas = 0;
  for await (const chunk of chunks) {
    if (chunk.text.length > 0) deltas++;
    message = message ? message.concat(chunk) : chunk;
  }
  if (!message) throw new Error('the stream carried no message');
  return { message, deltas };
}

function driver(name: string, path: ClientDriver['path'], modelOf: ModelOf): ClientDriver {
  return {
    name,
    path,
    async text(endpoint, model) {
      return (await (await modelOf(endpoint, model)).invoke(TEXT_PROMPT)).text;
    },
    async stream(endpoint, model) {
      const chat = await modelOf(endpoint, model);
      const { message, deltas } = await collect(await chat.stream(TEXT_PROMPT));
      return { text: message.text, deltas };
    },
    async toolLoop(endpoint, model, stream): Promise<ToolLoopResult> {
      const { HumanMessage } = await load<Messages>('@langchain/core/messages');
      const { tool } = await load<{
        tool(
          run: (input: { path: string }) => string,
          fields: Record<string, unknown>,
        ): { invoke(call: ToolCall & { type: 'tool_call' }): Promise<object> };
      }>('@langchain/core/tools');
      const { toolInput } = await schemas();
      const reads: string[] = [];
      const read = readTool(reads);
      const readFile = tool((input) => read(input.path), {
        name: TOOL_NAME,
        description: TOOL_DESCRIPTION,
        schema: toolInput,
      });
      const bound = (await modelOf(endpoint, model)).bindTools([readFile]);
      const messages: unknown[] = [new HumanMessage(TOOL_PROMPT)];
      for (let calls = 1; calls <= 5; calls++) {
        const answer = stream
          ? (await collect(await bound.stream(messages))).message
          : await bound.invoke(messages);
        messages.push(answer);
        const toolCalls = answer.tool_calls ?? [];
        if (toolCalls.length === 0) return { reads, modelCalls: calls, text: answer.text };
        // A tool invoked with a tool call answers with its ToolMessage.
        for (const call of toolCalls)
          messages.push(await readFile.invoke({ ...call, type: 'tool_call' }));
      }
      throw new Error('the tool loop did not end within 5 model calls');
    },
    async structured(endpoint, model) {
      const { weather } = await schemas();
      const chat = await modelOf(endpoint, model);
      return chat.withStructuredOutput(weather, { method: 'jsonSchema' }).invoke(STRUCTURED_PROMPT);
    },
  };
}

export const LANGCHAIN_DRIVERS: ClientDriver[] = [
  driver('LangChain ChatOpenAI', '/v1/chat/completions', (e, m) => chatOpenAi(e, m, false)),
  driver('LangChain ChatOpenAI, useResponsesApi', '/v1/responses', (e, m) =>
    chatOpenAi(e, m, true),
  ),
  driver('LangChain ChatAnthropic', '/v1/messages', chatAnthropic),
];
