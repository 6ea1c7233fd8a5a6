/** The buyer's media routes (docs/decisions/090-media-routes.md): path, kind, model type, format. */
import type { ModelType } from '../../catalog/index.js';
import type { ApiProtocol } from '../../network/index.js';

export type MediaKind = 'image' | 'image-edit' | 'video-queue' | 'video-retrieve' | 'decision';

export interface MediaRoute {
  name: string;
  kind: MediaKind;
  type: ModelType;
  protocol: ApiProtocol;
}

export const MEDIA_ROUTES: Record<string, MediaRoute> = {
  '/v1/images/generations': {
    name: 'images_generations',
    kind: 'image',
    type: 'image',
    protocol: 'openai-images',
  },
  '/v1/images/edits': {
    name: 'images_edits',
    kind: 'image-edit',
    type: 'image',
    protocol: 'openai-images',
  },
  '/api/v1/video/queue': {
    name: 'video_queue',
    kind: 'video-queue',
    type: 'video',
    protocol: 'video-queue',
  },
  '/api/v1/video/retrieve': {
    name: 'video_retrieve',
    kind: 'video-retrieve',
    type: 'video',
    protocol: 'video-queue',
  },
  '/fal/v1/video/queue': {
    name: 'fal_video_queue',
    kind: 'video-queue',
    type: 'video',
    protocol: 'fal-video',
  },
  '/fal/v1/video/retrieve': {
    name: 'fal_video_retrieve',
    kind: 'video-retrieve',
    type: 'video',
    protocol: 'fal-video',
  },
  '/v1/systemone': { name: 'systemone', kind: 'decision', type: 'decision', protocol: 'systemone' },
};
