/** What the buyer gathers for an answer's receipt as the answer arrives (transport.ts). */
import type { PeerId } from '../identity/index.js';
import { ExchangeHasher, requestHash } from './receiptHashes.js';
import type { ReceivedExchange, SellerRequest, SellerResponse } from './types.js';

type ResponseHead = Pick<SellerResponse, 'status' | 'headers'>;

/**
 * Body bytes held unhashed: an answer up to this size is hashed only if its receipt is checked,
 * after it reached the client; past it, the held bytes and the rest are hashed as they arrive.
 */
export const UNHASHED_RESPONSE_BYTES = 64 * 1024;

/**
 * What a receipt must cover, gathered as the answer arrives. The response hash is made only when
 * asked for (`exchange`, i.e. when the receipt is checked: every paid answer, a sample of free
 * ones, decision 181), from the body's chunks held until then; the chunks are views of received
 * messages that nothing writes to (frames.ts), so hashing them later hashes what arrived. An
 * answer longer than UNHASHED_RESPONSE_BYTES is hashed as it passes instead, so a long stream
 * holds no more than that. The request hash, likewise, is made only when asked for.
 */
export class ReceiptInputs {
  private readonly status: number;
  private hasher: ExchangeHasher | undefined;
  /** Body chunks not hashed yet (none once `hasher` has taken them). */
  private held: Uint8Array[] = [];
  private heldBytes = 0;
  private kept: Uint8Array[] | undefined;
  private keptBytes = 0;
  private ended: { responseBody?: Uint8Array } | undefined;
  private made: ReceivedExchange | undefined;

  constructor(
    private readonly buyerPeerId: PeerId,
    private readonly request: SellerRequest,
    head: ResponseHead,
  ) {
    this.status = head.status;
    if (request.keepResponseBytes !== undefined) this.kept = [];
  }

  chunk(payload: Uint8Array): void {
    if (this.hasher !== undefined) this.hasher.update(payload);
    else {
      this.held.push(payload);
      this.heldBytes += payload.byteLength;
      if (this.heldBytes > UNHASHED_RESPONSE_BYTES) this.hashHeld();
    }
    if (this.kept === undefined) return;
    this.keptBytes += payload.byteLength;
    // Payloads are views of the received messages: the kept ones are copied.
    if (this.keptBytes <= (this.request.keepResponseBytes ?? 0)) this.kept.push(payload.slice());
    else this.kept = undefined;
  }

  /** The body ended with a trailer. */
  end(): void {
    this.ended = this.kept ? { responseBody: Buffer.concat(this.kept) } : {};
    this.kept = undefined;
  }

  exchange(): ReceivedExchange | undefined {
    if (this.ended === undefined) return undefined;
    if (this.made === undefined) {
      const { method, path, body } = this.request;
      const responseHash = this.hashHeld().digest();
      this.made = {
        buyerPeerId: this.buyerPeerId,
        requestHash: requestHash(method, path, body),
        responseHash,
        ...this.ended,
      };
    }
    return this.made;
  }

  /** The response hasher, fed with every chunk held so far (which are let go). */
  private hashHeld(): ExchangeHasher {
    this.hasher ??= ExchangeHasher.response(this.status);
    for (const chunk of this.held) this.hasher.update(chunk);
    this.held = [];
    this.heldBytes = 0;
    return this.hasher;
  }
}
