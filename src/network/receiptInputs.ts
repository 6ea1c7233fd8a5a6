/** What the buyer gathers for an answer's receipt as the answer arrives (transport.ts). */
import type { PeerId } from '../identity/index.js';
import { ExchangeHasher, requestHash } from './receiptHashes.js';
import type { ReceivedExchange, SellerRequest, SellerResponse } from './types.js';

type ResponseHead = Pick<SellerResponse, 'status' | 'headers'>;

/**
 * What a receipt must cover, gathered as the answer arrives: the response hash fed with each body
 * chunk (and the chunks kept, when asked), the request hash made only when asked for.
 */
export class ReceiptInputs {
  private readonly response: ExchangeHasher;
  private kept: Uint8Array[] | undefined;
  private keptBytes = 0;
  private ended: { responseHash: `0x${string}`; responseBody?: Uint8Array } | undefined;
  private made: ReceivedExchange | undefined;

  constructor(
    private readonly buyerPeerId: PeerId,
    private readonly request: SellerRequest,
    head: ResponseHead,
  ) {
    this.response = ExchangeHasher.response(head.status);
    if (request.keepResponseBytes !== undefined) this.kept = [];
  }

  chunk(payload: Uint8Array): void {
    this.response.update(payload);
    if (this.kept === undefined) return;
    this.keptBytes += payload.byteLength;
    // Payloads are views of the received messages: the kept ones are copied.
    if (this.keptBytes <= (this.request.keepResponseBytes ?? 0)) this.kept.push(payload.slice());
    else this.kept = undefined;
  }

  /** The body ended with a trailer. */
  end(): void {
    const responseHash = this.response.digest();
    this.ended = this.kept
      ? { responseHash, responseBody: Buffer.concat(this.kept) }
      : { responseHash };
    this.kept = undefined;
  }

  exchange(): ReceivedExchange | undefined {
    if (this.ended === undefined) return undefined;
    const { method, path, body } = this.request;
    this.made ??= {
      buyerPeerId: this.buyerPeerId,
      requestHash: requestHash(method, path, body),
      ...this.ended,
    };
    return this.made;
  }
}
