/**
 * A seller's streamed answer as the buyer reads it: every chunk scanned for usage and outcome
 * (src/buyer/usage.ts), a thrown failure kept. Before the first content the buyer reads ahead of
 * the client (`readAhead`, src/buyer/firstContent.ts); those chunks are scanned at once and handed
 * on first. After that a chunk is scanned when the next one is asked for (after it was written) or
 * when the outcome is read, so the scan never sits between the seller's bytes and the client
 * (docs/decisions/145-request-path-pass-through.md).
 */
import type { SvcError } from '../errors/index.js';
import type { RouteCandidate } from '../routing/index.js';
import type { AttemptOk } from './attempt.js';
import { streamFailureOf } from './streamFailure.js';
import { StreamUsageScanner } from './usage.js';

const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined };

export class SellerTap implements AsyncIterable<Uint8Array> {
  private readonly tapScanner: StreamUsageScanner;
  thrown: unknown;
  /** The seller's body ended (cleanly or not). */
  done = false;
  private readonly events: AsyncIterator<Uint8Array>;
  private unscanned: Uint8Array | undefined;
  /** Chunks read (and scanned) ahead of the client, handed on before any new read. */
  private readonly ahead: Uint8Array[] = [];
  /** Bytes read ahead so far. */
  aheadBytes = 0;
  /** A read ahead still under way (the hold's bound passed while it waited). */
  private reading: Promise<boolean> | undefined;
  /** The failure a read ahead ended with, thrown once by `next()` after the chunks ahead. */
  private aheadFailure: unknown;

  private readonly peerId: string;

  constructor(ok: AttemptOk, candidate: RouteCandidate) {
    this.peerId = candidate.offer.peerId;
    this.tapScanner = new StreamUsageScanner(candidate.sellerProtocol);
    this.events = ok.response.body[Symbol.asyncIterator]();
  }

  /** The scanner, having seen every chunk handed on so far. */
  get scanner(): StreamUsageScanner {
    this.scanHandedOn();
    return this.tapScanner;
  }

  private scanHandedOn(): void {
    if (this.unscanned === undefined) return;
    this.tapScanner.push(this.unscanned);
    this.unscanned = undefined;
  }

  /** The failure the translator is given: the seller's, not an internal error. */
  private failureOf(error: unknown): unknown {
    this.done = true;
    this.thrown ??= error;
    return streamFailureOf(this.peerId, error, 'open') ?? error;
  }

  /**
   * Reads one chunk ahead of the client and scans it at once; true when one came, false when the
   * body ended or failed. One read ahead at a time.
   */
  readAhead(): Promise<boolean> {
    const read = this.events.next().then(
      (step) => {
        this.reading = undefined;
        if (step.done) {
          this.done = true;
          return false;
        }
        this.ahead.push(step.value);
        this.aheadBytes += step.value.length;
        this.tapScanner.push(step.value);
        return true;
      },
      (error: unknown) => {
        this.reading = undefined;
        this.aheadFailure = this.failureOf(error);
        return false;
      },
    );
    this.reading = read;
    return read;
  }

  async next(): Promise<IteratorResult<Uint8Array>> {
    if (this.reading) await this.reading;
    const held = this.ahead.shift();
    if (held !== undefined) return { done: false, value: held };
    if (this.aheadFailure !== undefined) {
      const failure = this.aheadFailure;
      this.aheadFailure = undefined;
      throw failure;
    }
    if (this.done) return DONE;
    try {
      this.scanHandedOn();
      const step = await this.events.next();
      if (step.done) this.done = true;
      else this.unscanned = step.value;
      return step;
    } catch (error) {
      throw this.failureOf(error);
    }
  }

  /** Reads what the translator left (a usage chunk, `[DONE]`) so the seller's body is never cut. */
  async drain(): Promise<void> {
    try {
      for (let step = await this.next(); !step.done; step = await this.next()) {
        // scanned in next()
      }
    } catch {
      // kept in `thrown`
    }
  }

  /** The failure of the seller's stream so far (a body that ended without a final event too). */
  failure(): SvcError | undefined {
    const { verdict } = this.scanner;
    if (verdict === 'open' && !this.done) return undefined;
    return streamFailureOf(this.peerId, this.thrown, verdict);
  }

  async close(): Promise<void> {
    await this.events.return?.().catch(() => undefined);
  }

  [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    return { next: () => this.next() };
  }
}
