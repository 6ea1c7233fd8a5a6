/**
 * Video jobs on the buyer: which seller accepted each queue_id (retrieve always goes back to
 * it: only that seller holds the job), request validation, and the 5.00 USD ceiling with a clear
 * error.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import type { Offer, OfferIndex } from '../../catalog/index.js';
import { ensureDir, writeFileAtomic } from '../../config/index.js';
import { SvcError } from '../../errors/index.js';
import { type PeerId, parsePeerId } from '../../identity/index.js';
import { formatUsd, usdNumberToMicro } from '../../money/index.js';
import { type RoutingTarget, VIDEO_PRICE_CEILING_MICRO } from '../../routing/index.js';

export interface VideoJob {
  peerId: PeerId;
  serviceId: string;
  queuedAt: number;
  /** When its video was first delivered (and paid for); later retrieves cost nothing. */
  deliveredAt?: number;
}

const MAX_JOBS = 10_000;
const FILE_VERSION = 1;

const fileSchema = z.object({
  version: z.literal(FILE_VERSION),
  jobs: z.array(
    z.tuple([
      z.string(),
      z.object({
        peerId: z.string(),
        serviceId: z.string(),
        queuedAt: z.number(),
        deliveredAt: z.number().optional(),
      }),
    ]),
  ),
});

/** `<data-dir>/buyer/video-jobs.json`: a restarted buyer still knows where each job went. */
export function videoJobsPath(dataDir: string): string {
  return join(dataDir, 'buyer', 'video-jobs.json');
}

/**
 * queue_id (per format) → the seller that accepted it; oldest forgotten first. With a file, the
 * map is loaded at start and written (atomically) after each new job: jobs take minutes and a
 * buyer restart must not strand one the seller is still rendering.
 */
export class VideoJobs {
  private readonly jobs = new Map<string, VideoJob>();
  private readonly path: string | undefined;

  constructor(path?: string) {
    this.path = path;
    if (!path || !existsSync(path)) return;
    try {
      const parsed = fileSchema.parse(JSON.parse(readFileSync(path, 'utf8')));
      for (const [key, job] of parsed.jobs.slice(-MAX_JOBS)) {
        this.jobs.set(key, { ...job, peerId: parsePeerId(job.peerId) });
      }
    } catch {
      // A corrupt file loses only the job map (retrieves answer video_job_not_found).
    }
  }

  remember(format: string, queueId: string, job: VideoJob): void {
    if (this.jobs.size >= MAX_JOBS) {
      const oldest = this.jobs.keys().next().value;
      if (oldest !== undefined) this.jobs.delete(oldest);
    }
    this.jobs.set(`${format}|${queueId}`, job);
    this.save();
  }

  /**
   * True the first time the job's video is delivered, false after (spec 3.2: the seller is paid
   * once, at delivery). Marked before paying and kept across restarts, so a second retrieve,
   * concurrent or after a restart, is never paid again.
   */
  claimDelivery(format: string, queueId: string, now: number): boolean {
    const job = this.jobs.get(`${format}|${queueId}`);
    if (!job || job.deliveredAt !== undefined) return false;
    job.deliveredAt = now;
    this.save();
    return true;
  }

  get(format: string, queueId: string): VideoJob | undefined {
    return this.jobs.get(`${format}|${queueId}`);
  }

  private save(): void {
    if (!this.path) return;
    ensureDir(dirname(this.path));
    const file = { version: FILE_VERSION, jobs: [...this.jobs] };
    writeFileAtomic(this.path, JSON.stringify(file));
  }
}

/** Checks a first-format queue body: prompt and `duration` ("<digits>s"). */
export function validateQueueBody(body: Record<string, unknown>, firstFormat: boolean): void {
  if (!firstFormat) return;
  if (typeof body.prompt !== 'string' || body.prompt === '') {
    throw new SvcError('invalid_request', {
      message: '"prompt" must be a non-empty string.',
      details: { param: 'prompt' },
    });
  }
  if (
    body.duration !== undefined &&
    (typeof body.duration !== 'string' || !/^\d+s$/.test(body.duration))
  ) {
    throw new SvcError('invalid_request', {
      message: '"duration" must be digits followed by "s", e.g. "5s".',
      details: { param: 'duration' },
    });
  }
}

function videoMicro(offer: Offer): bigint | undefined {
  const usd = offer.unitBilling?.videoUsd;
  return usd === undefined ? undefined : usdNumberToMicro(usd);
}

/**
 * Refuses (402 `video_price_above_ceiling`, naming the price) when the pinned video offer, or
 * every video offer of an automatic model, costs more than 5.00 USD.
 */
export function checkVideoCeiling(index: OfferIndex, target: RoutingTarget): void {
  let offers: Offer[];
  if (target.kind === 'pinned') {
    const offer = target.model ? index.offerOf(target.peerId, target.model) : undefined;
    offers = offer ? [offer] : [];
  } else {
    offers = index.model(target.model)?.offers ?? [];
  }
  const priced = offers
    .filter((offer) => offer.type === 'video')
    .map((offer) => ({ offer, micro: videoMicro(offer) }));
  if (priced.length === 0) return;
  if (priced.some((p) => p.micro === undefined || p.micro <= VIDEO_PRICE_CEILING_MICRO)) return;
  const cheapest = priced.reduce((a, b) => (b.micro! < a.micro! ? b : a));
  const price = formatUsd(cheapest.micro!);
  throw new SvcError('video_price_above_ceiling', {
    message: `Video model "${cheapest.offer.serviceId}" at seller ${cheapest.offer.peerId} costs ${price} USD per video; the buyer refuses videos priced above ${formatUsd(VIDEO_PRICE_CEILING_MICRO)} USD.`,
    details: {
      peerId: cheapest.offer.peerId,
      model: cheapest.offer.serviceId,
      videoUsd: price,
      ceilingUsd: formatUsd(VIDEO_PRICE_CEILING_MICRO),
    },
  });
}
