/** What a generated answer needs, for the demo provider and the fake upstreams alike. */
import type { TokenUsage } from '../../money/index.js';

export interface AnswerSpec {
  /** Model id echoed in the response. */
  model: string;
  /** The assistant's text. */
  text: string;
  usage: TokenUsage;
  /** Pieces the text is streamed in (default: words). */
  chunks?: string[];
  /** Unix seconds for `created` fields. */
  created?: number;
  /** Stable id suffix. */
  id?: string;
}

/** Splits text into word-sized stream pieces (keeping spaces), as vendors roughly do. */
export function textChunks(spec: AnswerSpec): string[] {
  if (spec.chunks) return spec.chunks;
  const pieces = spec.text.match(/\S+\s*|\s+/g) ?? [];
  return pieces.length > 0 ? pieces : [''];
}
