/**
 * Which free answers' receipts the buyer checks (docs/decisions/181-receipt-checks-by-sample.md):
 * a random share of them, decided after the answer arrived with a cryptographic random draw the
 * seller never sees, and every one of a seller whose receipt was refused in the last hour. Paid
 * answers and audits are always checked (src/buyer/receiptCheck.ts): their verdict sets an
 * amount or becomes evidence. A free answer's verdict changes no payment; checking a share keeps
 * a seller that signs bad receipts caught within a few dozen answers, at a fraction of the cost.
 */
import { randomFillSync } from 'node:crypto';

const HOUR_MS = 3_600_000;
/** Sellers remembered as suspect at once; the oldest is forgotten first beyond this. */
const MAX_SUSPECTS = 10_000;
const DRAWS = 256;

export class ReceiptSampler {
  private readonly suspects = new Map<string, number>();
  /** Random 32-bit draws, filled 256 at a time (one system call instead of one each). */
  private readonly draws = new Uint32Array(DRAWS);
  private next = DRAWS;

  constructor(
    private readonly share: number,
    private readonly clock: () => number,
  ) {}

  /** True when the receipt of this free answer from `peerId` is to be checked. */
  shouldCheck(peerId: string): boolean {
    if (this.share >= 1) return true;
    const until = this.suspects.get(peerId);
    if (until !== undefined) {
      if (until > this.clock()) return true;
      this.suspects.delete(peerId);
    }
    return this.draw() < this.share;
  }

  /** A refused receipt (now, or at `atMs`): every answer of `peerId` is checked for an hour after. */
  suspect(peerId: string, atMs = this.clock()): void {
    const until = atMs + HOUR_MS;
    if (until <= this.clock()) return;
    this.suspects.delete(peerId);
    this.suspects.set(peerId, until);
    if (this.suspects.size > MAX_SUSPECTS) {
      const oldest = this.suspects.keys().next().value;
      if (oldest !== undefined) this.suspects.delete(oldest);
    }
  }

  /** A uniform draw in [0, 1). */
  private draw(): number {
    if (this.next === DRAWS) {
      randomFillSync(this.draws);
      this.next = 0;
    }
    return this.draws[this.next++]! / 2 ** 32;
  }
}
