/**
 * Evidence for audits (docs/decisions/168-receipts-anyone-can-check.md): for the auditor's own
 * requests only, the buyer keeps the seller's verified receipt with the exact request it sent
 * and response it received, until the auditor takes it by the request's id (the answer's
 * `x-svc-request-id`). Bounded in count, bytes and age: evidence nobody takes is dropped, oldest
 * first, and a user's request never leaves anything here.
 */
import type { AnswerEvidence } from '../network/index.js';

/** Largest response kept as evidence; an audit answer above it is kept without evidence. */
export const MAX_EVIDENCE_RESPONSE_BYTES = 1024 * 1024;

export interface EvidenceLimits {
  /** Most answers kept (default 256). */
  maxEntries?: number;
  /** Most request and response bytes kept in all (default 32 MiB). */
  maxBytes?: number;
  /** Evidence older than this is dropped (default 10 minutes). */
  maxAgeMs?: number;
}

interface Kept {
  evidence: AnswerEvidence;
  bytes: number;
  atMs: number;
}

/** The evidence of recent audit answers, by request id, until taken. */
export class EvidenceStore {
  private readonly kept = new Map<string, Kept>();
  private bytes = 0;
  private readonly maxEntries: number;
  private readonly maxBytes: number;
  private readonly maxAgeMs: number;

  constructor(
    private readonly clock: () => number,
    limits: EvidenceLimits = {},
  ) {
    this.maxEntries = limits.maxEntries ?? 256;
    this.maxBytes = limits.maxBytes ?? 32 * 1024 * 1024;
    this.maxAgeMs = limits.maxAgeMs ?? 10 * 60_000;
  }

  /** Keeps `evidence` for `requestId`, dropping the oldest beyond the limits. */
  keep(requestId: string, evidence: AnswerEvidence): void {
    const bytes = evidence.request.body.byteLength + evidence.response.body.byteLength;
    this.remove(requestId);
    if (bytes > this.maxBytes) return;
    this.kept.set(requestId, { evidence, bytes, atMs: this.clock() });
    this.bytes += bytes;
    this.prune();
  }

  /** The evidence of `requestId`, removed from the store; undefined when none is kept. */
  take(requestId: string): AnswerEvidence | undefined {
    this.prune();
    const kept = this.kept.get(requestId);
    if (kept === undefined) return undefined;
    this.remove(requestId);
    return kept.evidence;
  }

  /** Answers kept now. */
  size(): number {
    this.prune();
    return this.kept.size;
  }

  private remove(requestId: string): void {
    const kept = this.kept.get(requestId);
    if (kept === undefined) return;
    this.kept.delete(requestId);
    this.bytes -= kept.bytes;
  }

  /** Oldest first (the map keeps insertion order): past the count, the bytes or the age. */
  private prune(): void {
    const oldest = this.clock() - this.maxAgeMs;
    for (const [requestId, kept] of this.kept) {
      const over = this.kept.size > this.maxEntries || this.bytes > this.maxBytes;
      if (!over && kept.atMs >= oldest) break;
      this.remove(requestId);
    }
  }
}
