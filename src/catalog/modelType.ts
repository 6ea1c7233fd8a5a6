/** The type of a model, from its announced categories and API protocols. */
import type { ApiProtocol } from '../network/index.js';

export type ModelType = 'text' | 'image' | 'video' | 'decision';

/** Values of the `/v1/models?type=` filter mapped to catalog types. */
export const TYPE_FILTERS: Record<string, ModelType> = {
  text: 'text',
  images: 'image',
  videos: 'video',
  decisions: 'decision',
};

/** Categories win; otherwise the protocols decide; otherwise text. */
export function modelTypeOf(
  categories: readonly string[],
  protocols: readonly ApiProtocol[],
): ModelType {
  const lower = categories.map((category) => category.toLowerCase());
  if (lower.some((c) => c === 'image' || c === 'images' || c === 'image-generation'))
    return 'image';
  if (lower.some((c) => c === 'video' || c === 'videos' || c === 'video-generation'))
    return 'video';
  if (lower.some((c) => c === 'decision' || c === 'decisions')) return 'decision';
  if (protocols.length > 0) {
    if (protocols.every((p) => p === 'openai-images')) return 'image';
    if (protocols.every((p) => p === 'video-queue' || p === 'fal-video')) return 'video';
    if (protocols.every((p) => p === 'systemone')) return 'decision';
  }
  return 'text';
}
