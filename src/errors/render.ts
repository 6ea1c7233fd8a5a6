/**
 * Renders an SvcError as a response body in the client's API style:
 * OpenAI style on chat-completions / responses / images, Anthropic style on messages.
 * Both carry the stable `code` of errors/codes.ts.
 */
import { anthropicTypeForStatus, openAiTypeForStatus } from './codes.js';
import type { SvcError } from './SvcError.js';

/** The API style a route answers in. */
export type ErrorStyle = 'openai' | 'anthropic';

export interface OpenAiErrorBody {
  error: {
    message: string;
    type: string;
    code: string;
    param: string | null;
    [detail: string]: unknown;
  };
}

export interface AnthropicErrorBody {
  type: 'error';
  error: { type: string; message: string; code: string; [detail: string]: unknown };
}

/** `{"error":{"message","type","code","param",...details}}` */
export function renderOpenAiError(error: SvcError): OpenAiErrorBody {
  const { param, ...details } = error.details ?? {};
  return {
    error: {
      ...details,
      message: error.message,
      type: openAiTypeForStatus(error.status),
      code: error.code,
      param: typeof param === 'string' ? param : null,
    },
  };
}

/** `{"type":"error","error":{"type","message","code",...details}}` */
export function renderAnthropicError(error: SvcError): AnthropicErrorBody {
  return {
    type: 'error',
    error: {
      ...(error.details ?? {}),
      type: anthropicTypeForStatus(error.status),
      message: error.message,
      code: error.code,
    },
  };
}

/** A body both vendors' SDKs read: Anthropic's `type: "error"` envelope around OpenAI's fields. */
export interface BothStylesErrorBody {
  type: 'error';
  error: OpenAiErrorBody['error'];
}

/**
 * Renders in both styles at once, for answers a client gets before its route's style matters
 * (a refused key): each SDK finds `error.message` and `error.type` where it looks.
 */
export function renderBothStyles(error: SvcError): BothStylesErrorBody {
  const openai = renderOpenAiError(error);
  return {
    type: 'error',
    error: { ...openai.error, type: anthropicTypeForStatus(error.status) },
  };
}

/** Renders in the given style. */
export function renderError(
  error: SvcError,
  style: ErrorStyle,
): OpenAiErrorBody | AnthropicErrorBody {
  return style === 'anthropic' ? renderAnthropicError(error) : renderOpenAiError(error);
}

/** The style of a route: Anthropic for /v1/messages*, OpenAI for everything else. */
export function errorStyleForPath(path: string): ErrorStyle {
  return path.startsWith('/v1/messages') ? 'anthropic' : 'openai';
}
