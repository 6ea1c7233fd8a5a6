/**
 * The internal conversation model every format parses into and renders from
 * (docs/decisions/020-format-translation.md). Roles are only user and assistant; the system prompt
 * is separate; tool results live in user turns; images keep their source.
 */

export type ImageSource =
  | { kind: 'url'; url: string }
  | { kind: 'base64'; mediaType: string; data: string };

export interface TextPart {
  type: 'text';
  text: string;
}

export interface ImagePart {
  type: 'image';
  source: ImageSource;
  /** OpenAI `detail` when not the default `auto`; Anthropic has none. */
  detail?: 'low' | 'high';
}

export type DocumentSource =
  | { kind: 'base64'; mediaType: string; data: string }
  | { kind: 'url'; url: string }
  | { kind: 'text'; text: string };

/** A file the model reads (PDF or plain text). */
export interface DocumentPart {
  type: 'document';
  source: DocumentSource;
  filename?: string;
}

/** What a user turn or a tool result may hold besides tool parts. */
export type UserContent = TextPart | ImagePart | DocumentPart;

export interface ToolCallPart {
  type: 'tool_call';
  id: string;
  name: string;
  /** JSON text of the arguments, as OpenAI carries them. */
  arguments: string;
}

export interface ToolResultPart {
  type: 'tool_result';
  callId: string;
  content: UserContent[];
  isError?: boolean;
}

export interface ReasoningPart {
  type: 'reasoning';
  text: string;
  /** Anthropic thinking signature (only meaningful back to Anthropic). */
  signature?: string;
}

export type Part = UserContent | ToolCallPart | ToolResultPart | ReasoningPart;

export interface Turn {
  role: 'user' | 'assistant';
  parts: Part[];
}

export interface ToolDef {
  name: string;
  description?: string;
  parameters: Record<string, unknown>;
  strict?: boolean;
}

export type ToolChoice =
  | { type: 'auto' }
  | { type: 'none' }
  | { type: 'required' }
  | { type: 'tool'; name: string };

export type OutputFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | {
      type: 'json_schema';
      name: string;
      schema: Record<string, unknown>;
      strict?: boolean;
      description?: string;
    };

export type ReasoningEffort = 'minimal' | 'low' | 'medium' | 'high';

/** One request, format-independent. */
export interface Conversation {
  model: string;
  system: string[];
  turns: Turn[];
  tools: ToolDef[];
  toolChoice?: ToolChoice;
  parallelToolCalls?: boolean;
  maxOutputTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  seed?: number;
  stop?: string[];
  outputFormat?: OutputFormat;
  reasoning?: { effort?: ReasoningEffort; budgetTokens?: number; enabled: boolean };
  user?: string;
  metadata?: Record<string, string>;
  stream: boolean;
  /** chat `stream_options.include_usage` as the client sent it. */
  includeUsage?: boolean;
}

/** Why generation stopped, in one vocabulary (mapped per format in reasons.ts). */
export type StopReason =
  | 'end_turn'
  | 'max_tokens'
  | 'stop_sequence'
  | 'tool_use'
  | 'content_filter'
  | 'refusal'
  | 'pause_turn';

/** Token counts; `inputTokens` INCLUDES cached and cache-creation tokens. */
export interface Usage {
  inputTokens: number;
  cachedInputTokens: number;
  cacheCreationInputTokens: number;
  outputTokens: number;
  reasoningTokens?: number;
}

export function emptyUsage(): Usage {
  return { inputTokens: 0, cachedInputTokens: 0, cacheCreationInputTokens: 0, outputTokens: 0 };
}

/** One non-streaming answer, format-independent. */
export interface ModelResponse {
  id: string;
  model: string;
  /** Unix seconds. */
  created: number;
  parts: Array<TextPart | ToolCallPart | ReasoningPart>;
  stopReason: StopReason;
  stopSequence?: string | null;
  usage: Usage;
}

/** The context a response or stream translation may use. */
export interface TranslateContext {
  /** The model name to show the client (defaults to the seller's). */
  model?: string;
  /** Clock for `created` fields (Unix ms). */
  now?: () => number;
  /**
   * Chat targets: send the final usage chunk (`choices: []`). Default true; pass the client's
   * `stream_options.include_usage` to hide it from clients that did not ask for it.
   */
  includeUsage?: boolean;
  /** Seller tool name -> client tool name, from `TranslatedRequest.toolNames`. */
  toolNames?: Record<string, string>;
  /** Called when the seller stream fails (the client still gets a well-formed error event). */
  onError?: (error: unknown) => void;
}
