/**
 * The official `openai` and `@anthropic-ai/sdk` clients (the project's own test clients, from
 * its devDependencies) as their users drive them. The responses tool loop continues with
 * `previous_response_id` and only the tool's output, as the vendor's guide shows: the buyer
 * expands it for sellers that do not hold the response (docs/decisions/173).
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import {
  type ClientDriver,
  type Endpoint,
  readTool,
  STRUCTURED_PROMPT,
  TEXT_PROMPT,
  TOOL_DESCRIPTION,
  TOOL_JSON_SCHEMA,
  TOOL_NAME,
  TOOL_PROMPT,
  type ToolLoopResult,
  WEATHER_JSON_SCHEMA,
} from './shared.js';

function openai(endpoint: Endpoint): OpenAI {
  return new OpenAI({ baseURL: endpoint.openaiBaseUrl, apiKey: endpoint.apiKey, maxRetries: 0 });
}

function anthropic(endpoint: Endpoint): Anthropic {
  return new Anthropic({
    baseURL: endpoint.anthropicBaseUrl,
    maxRetries: 0,
    // The gateway reads its key as a bearer token; the buyer reads none.
    ...(endpoint.route === 'gateway'
      ? { authToken: endpoint.apiKey }
      : { apiKey: endpoint.apiKey }),
  });
}

function pathOf(args: string): unknown {
  return (JSON.parse(args) as { path?: unknown }).path;
}

const chat: ClientDriver = {
  name: 'openai SDK, chat completions',
  path: '/v1/chat/completions',
  async text(endpoint, model) {
    const completion = await openai(endpoint).chat.completions.create({
      model,
      messages: [{ role: 'user', content: TEXT_PROMPT }],
    });
    return completion.choices[0]?.message.content ?? '';
  },
  async stream(endpoint, model) {
    const stream = await openai(endpoint).chat.completions.create({
      model,
      messages: [{ role: 'user', content: TEXT_PROMPT }],
      stream: true,
    });
    let text = '';
    let deltas = 0;
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta.content ?? '';
      if (delta) deltas++;
      text += delta;
    }
    return { text, deltas };
  },
  async toolLoop(endpoint, model, stream): Promise<ToolLoopResult> {
    const client = openai(endpoint);
    const reads: string[] = [];
    const read = readTool(reads);
    const tools: OpenAI.Chat.ChatCompletionTool[] = [
      {
        type: 'function',
        function: { name: TOOL_NAME, description: TOOL_DESCRIPTION, parameters: TOOL_JSON_SCHEMA },
      },
    ];
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
      { role: 'user', content: TOOL_PROMPT },
    ];
    for (let calls = 1; calls <= 5; calls++) {
      const completion = stream
        ? await client.chat.completions.stream({ model, messages, tools }).finalChatCompletion()
        : await client.chat.completions.create({ model, messages, tools });
      const message = completion.choices[0]!.message;
      const toolCalls = (message.tool_calls ?? []).filter((call) => call.type === 'function');
      if (toolCalls.length === 0) return { reads, modelCalls: calls, text: message.content ?? '' };
      messages.push({ role: 'assistant', content: message.content, tool_calls: toolCalls });
      for (const call of toolCalls) {
        const content = read(pathOf(call.function.arguments));
        messages.push({ role: 'tool', tool_call_id: call.id, content });
      }
    }
    throw new Error('the tool loop did not end within 5 model calls');
  },
  async structured(endpoint, model) {
    const completion = await openai(endpoint).chat.completions.create({
      model,
      messages: [{ role: 'user', content: STRUCTURED_PROMPT }],
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'weather', schema: WEATHER_JSON_SCHEMA, strict: true },
      },
    });
    return JSON.parse(completion.choices[0]?.message.content ?? 'null');
  },
};

const responses: ClientDriver = {
  name: 'openai SDK, Responses (previous_response_id)',
  path: '/v1/responses',
  async text(endpoint, model) {
    return (await openai(endpoint).responses.create({ model, input: TEXT_PROMPT })).output_text;
  },
  async stream(endpoint, model) {
    const stream = await openai(endpoint).responses.create({
      model,
      input: TEXT_PROMPT,
      stream: true,
    });
    let text = '';
    let deltas = 0;
    for await (const event of stream) {
      if (event.type !== 'response.output_text.delta') continue;
      deltas++;
      text += event.delta;
    }
    return { text, deltas };
  },
  async toolLoop(endpoint, model, stream): Promise<ToolLoopResult> {
    const client = openai(endpoint);
    const reads: string[] = [];
    const read = readTool(reads);
    const tools: OpenAI.Responses.Tool[] = [
      {
        type: 'function',
        name: TOOL_NAME,
        description: TOOL_DESCRIPTION,
        parameters: TOOL_JSON_SCHEMA,
        strict: true,
      },
    ];
    let input: OpenAI.Responses.ResponseInput = [{ role: 'user', content: TOOL_PROMPT }];
    let previous: string | undefined;
    for (let calls = 1; calls <= 5; calls++) {
      const params = {
        model,
        input,
        tools,
        ...(previous ? { previous_response_id: previous } : {}),
      };
      const response = stream
        ? await client.responses.stream(params).finalResponse()
        : await client.responses.create(params);
      const toolCalls = response.output.flatMap((item) =>
        item.type === 'function_call' ? [item] : [],
      );
      if (toolCalls.length === 0) return { reads, modelCalls: calls, text: response.output_text };
      previous = response.id;
      input = toolCalls.map((call) => ({
        type: 'function_call_output' as const,
        call_id: call.call_id,
        output: read(pathOf(call.arguments)),
      }));
    }
    throw new Error('the tool loop did not end within 5 model calls');
  },
  async structured(endpoint, model) {
    const response = await openai(endpoint).responses.create({
      model,
      input: STRUCTURED_PROMPT,
      text: {
        format: { type: 'json_schema', name: 'weather', schema: WEATHER_JSON_SCHEMA, strict: true },
      },
    });
    return JSON.parse(response.output_text);
  },
};

function messageText(message: Anthropic.Message): string {
  return message.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
}

const messages: ClientDriver = {
  name: '@anthropic-ai/sdk, messages',
  path: '/v1/messages',
  async text(endpoint, model) {
    return messageText(
      await anthropic(endpoint).messages.create({
        model,
        max_tokens: 512,
        messages: [{ role: 'user', content: TEXT_PROMPT }],
      }),
    );
  },
  async stream(endpoint, model) {
    const stream = anthropic(endpoint).messages.stream({
      model,
      max_tokens: 512,
      messages: [{ role: 'user', content: TEXT_PROMPT }],
    });
    let deltas = 0;
    stream.on('text', () => {
      deltas++;
    });
    return { text: messageText(await stream.finalMessage()), deltas };
  },
  async toolLoop(endpoint, model, stream): Promise<ToolLoopResult> {
    const client = anthropic(endpoint);
    const reads: string[] = [];
    const read = readTool(reads);
    const tools: Anthropic.Tool[] = [
      {
        name: TOOL_NAME,
        description: TOOL_DESCRIPTION,
        input_schema: { ...TOOL_JSON_SCHEMA, type: 'object' },
      },
    ];
    const history: Anthropic.MessageParam[] = [{ role: 'user', content: TOOL_PROMPT }];
    for (let calls = 1; calls <= 5; calls++) {
      const params = { model, max_tokens: 1024, messages: history, tools };
      const message = stream
        ? await client.messages.stream(params).finalMessage()
        : await client.messages.create(params);
      const uses = message.content.filter((block) => block.type === 'tool_use');
      if (uses.length === 0) return { reads, modelCalls: calls, text: messageText(message) };
      history.push({ role: 'assistant', content: message.content });
      history.push({
        role: 'user',
        content: uses.map((use) => ({
          type: 'tool_result' as const,
          tool_use_id: use.id,
          content: read((use.input as { path?: unknown }).path),
        })),
      });
    }
    throw new Error('the tool loop did not end within 5 model calls');
  },
  async structured(endpoint, model) {
    const message = await anthropic(endpoint).messages.create({
      model,
      max_tokens: 512,
      messages: [{ role: 'user', content: STRUCTURED_PROMPT }],
      output_config: { format: { type: 'json_schema', schema: WEATHER_JSON_SCHEMA } },
    });
    return JSON.parse(messageText(message));
  },
};

export const OFFICIAL_SDK_DRIVERS: ClientDriver[] = [chat, responses, messages];
