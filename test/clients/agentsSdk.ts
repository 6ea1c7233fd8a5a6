/**
 * The OpenAI Agents SDK (`@openai/agents`) as its users drive it: an `Agent` with a function
 * tool run by a `Runner` whose model provider points at svc, over the Responses API or over
 * chat completions, streamed or not; `outputType` for structured output. Tracing is off: nothing
 * leaves the machine.
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

interface RunItem {
  type: string;
}

interface RunResult {
  finalOutput: unknown;
  newItems: RunItem[];
}

interface StreamedRunResult extends RunResult {
  toTextStream(): AsyncIterable<string>;
  completed: Promise<void>;
  error: unknown;
}

interface Runner {
  run(agent: object, input: string): Promise<RunResult>;
  run(agent: object, input: string, options: { stream: true }): Promise<StreamedRunResult>;
}

interface Agents {
  Agent: new (config: Record<string, unknown>) => object;
  Runner: new (config: Record<string, unknown>) => Runner;
  OpenAIProvider: new (options: Record<string, unknown>) => object;
  tool(definition: Record<string, unknown>): unknown;
  setTracingDisabled(disabled: boolean): void;
}

async function agents(): Promise<Agents> {
  const sdk = await load<Agents>('@openai/agents');
  sdk.setTracingDisabled(true);
  return sdk;
}

function runnerOf(sdk: Agents, endpoint: Endpoint, useResponses: boolean): Runner {
  const modelProvider = new sdk.OpenAIProvider({
    baseURL: endpoint.openaiBaseUrl,
    apiKey: endpoint.apiKey,
    useResponses,
  });
  return new sdk.Runner({ modelProvider, tracingDisabled: true });
}

/** Model calls of a run: one per tool-call round, plus the final answer. */
function modelCalls(items: RunItem[]): number {
  let calls = 1;
  let previous = '';
  for (const item of items) {
    if (item.type === 'tool_call_item' && previous !== 'tool_call_item') calls++;
    previous = item.type;
  }
  return calls;
}

async function streamRun(
  runner: Runner,
  agent: object,
  input: string,
): Promise<{ result: StreamedRunResult; deltas: number }> {
  const result = await runner.run(agent, input, { stream: true });
  let deltas = 0;
  for await (const delta of result.toTextStream()) if (delta.length > 0) deltas++;
  await result.completed;
  if (result.error) throw result.error;
  return { result, deltas };
}

function driver(name: string, path: ClientDriver['path'], useResponses: boolean): ClientDriver {
  const agentOf = (sdk: Agents, model: string, extra: Record<string, unknown> = {}) =>
    new sdk.Agent({ name: 'svc matrix', instructions: 'Be brief.', model, ...extra });
  return {
    name,
    path,
    async text(endpoint, model) {
      const sdk = await agents();
      const result = await runnerOf(sdk, endpoint, useResponses).run(
        agentOf(sdk, model),
        TEXT_PROMPT,
      );
      return String(result.finalOutput ?? '');
    },
    async stream(endpoint, model) {
      const sdk = await agents();
      const runner = runnerOf(sdk, endpoint, useResponses);
      const { result, deltas } = await streamRun(runner, agentOf(sdk, model), TEXT_PROMPT);
      return { text: String(result.finalOutput ?? ''), deltas };
    },
    async toolLoop(endpoint, model, stream): Promise<ToolLoopResult> {
      const sdk = await agents();
      const { toolInput } = await schemas();
      const reads: string[] = [];
      const read = readTool(reads);
      const agent = agentOf(sdk, model, {
        tools: [
          sdk.tool({
            name: TOOL_NAME,
            description: TOOL_DESCRIPTION,
            parameters: toolInput,
            execute: async (input: { path: string }) => read(input.path),
          }),
        ],
      });
      const runner = runnerOf(sdk, endpoint, useResponses);
      const result = stream
        ? (await streamRun(runner, agent, TOOL_PROMPT)).result
        : await runner.run(agent, TOOL_PROMPT);
      return {
        reads,
        modelCalls: modelCalls(result.newItems),
        text: String(result.finalOutput ?? ''),
      };
    },
    async structured(endpoint, model) {
      const sdk = await agents();
      const { weather } = await schemas();
      const agent = agentOf(sdk, model, { outputType: weather });
      const result = await runnerOf(sdk, endpoint, useResponses).run(agent, STRUCTURED_PROMPT);
      return result.finalOutput;
    },
  };
}

export const AGENTS_SDK_DRIVERS: ClientDriver[] = [
  driver('OpenAI Agents SDK, Responses', '/v1/responses', true),
  driver('OpenAI Agents SDK, chat completions', '/v1/chat/completions', false),
];
