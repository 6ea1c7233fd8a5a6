/**
 * What every client driver of the interop matrix shares (test/clients/matrix.test.ts): where it
 * sends requests, what it asks, the tool it offers and the answers it reports. The client
 * libraries are pinned in test/clients/package.json and loaded at run time, so this repository's
 * type check never needs them: each driver names only the few members it calls.
 */

/** Where a client sends its requests: the buyer (no key) or the gateway (with a key). */
export interface Endpoint {
  route: 'buyer' | 'gateway';
  /** Base URL of the OpenAI-style SDKs (ends in /v1). */
  openaiBaseUrl: string;
  /** Base URL of the Anthropic SDK and the clients built on it (no /v1). */
  anthropicBaseUrl: string;
  /** The gateway key, or a placeholder for the buyer (which checks none). */
  apiKey: string;
}

/** What a tool loop did. */
export interface ToolLoopResult {
  /** Paths the client's tool was called with (the client ran it). */
  reads: string[];
  /** Model calls the loop made (a tool call and the answer after it: at least 2). */
  modelCalls: number;
  /** The final answer's text. */
  text: string;
  /** `item_reference` items the client sent (counted for clients that send them). */
  itemReferences?: number;
}

/** One client library (or one mode of it) driven the way its users do. */
export interface ClientDriver {
  name: string;
  /** The buyer route it speaks. */
  path: '/v1/chat/completions' | '/v1/responses' | '/v1/messages';
  text(endpoint: Endpoint, model: string): Promise<string>;
  stream(endpoint: Endpoint, model: string): Promise<{ text: string; deltas: number }>;
  toolLoop(endpoint: Endpoint, model: string, stream: boolean): Promise<ToolLoopResult>;
  /** The client continues its tool loops with `item_reference` items (Responses with store). */
  sendsItemReferences?: boolean;
  /** Structured output the client's own way; the parsed object. */
  structured(endpoint: Endpoint, model: string): Promise<unknown>;
}

export const TEXT_PROMPT = 'Say hello in a few words.';
/** The demo model answers this with a call of the offered read tool (docs/guide/selling.md "Demo model"). */
export const TOOL_PROMPT = 'Read notes.txt and tell me what it says.';
export const TOOL_NAME = 'read_file';
export const TOOL_DESCRIPTION = 'Read a text file and return its content.';
/** What the tool returns; the seller's upstream must receive it, whatever its format. */
export const FILE_TEXT = 'notes.txt holds the word heron-41.';
export const STRUCTURED_PROMPT = 'Give the weather in Paris as JSON.';
/** What the stand-in vendor fills the weather schema with (test/support/structuredAnswer.ts). */
export const STRUCTURED_ANSWER = { city: 'svc', celsius: 1 };

/** A module of a pinned client library, loaded from test/clients/node_modules at run time. */
export async function load<T>(specifier: string): Promise<T> {
  const name: string = specifier;
  return (await import(name)) as T;
}

/** The members of zod the drivers use (the same copy the client libraries use). */
export interface Zod {
  object(shape: Record<string, unknown>): ZodSchema;
  string(): ZodSchema;
  number(): ZodSchema;
}
/** A zod schema, opaque here; `describe` adds the description clients pass on. */
export interface ZodSchema {
  describe(text: string): ZodSchema;
}

export async function zod(): Promise<Zod> {
  return (await load<{ z: Zod }>('zod')).z;
}

/** The tool's input schema and the weather schema, built with the clients' zod. */
export async function schemas(): Promise<{ toolInput: ZodSchema; weather: ZodSchema }> {
  const z = await zod();
  return {
    toolInput: z.object({ path: z.string().describe('Path of the file') }),
    weather: z.object({ city: z.string(), celsius: z.number() }),
  };
}

/** The weather schema as plain JSON schema (for clients that take one). */
export const WEATHER_JSON_SCHEMA = {
  type: 'object',
  properties: { city: { type: 'string' }, celsius: { type: 'number' } },
  required: ['city', 'celsius'],
  additionalProperties: false,
};
/** The tool's input as plain JSON schema. */
export const TOOL_JSON_SCHEMA = {
  type: 'object',
  properties: { path: { type: 'string', description: 'Path of the file' } },
  required: ['path'],
  additionalProperties: false,
};

/** The tool itself: records the path and returns the file's text. */
export function readTool(reads: string[]): (path: unknown) => string {
  return (path) => {
    reads.push(String(path));
    return FILE_TEXT;
  };
}
