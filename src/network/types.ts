/**
 * The seam between the network (libp2p, discovery, request streams) and its users (buyer,
 * seller, payments, browse). The network capability implements these; others code against them.
 */
import type { ApiProtocol } from '../formats/index.js';
import type { PeerId } from '../identity/index.js';
import type { TokenPricing, TokenUsage } from '../money/index.js';
import type { Receipt } from './receipts.js';

/** Peer metadata schema version carried in `version`. */
export const METADATA_VERSION = 1;

/** API formats a service can be reached in (values of `serviceApiProtocols`); formats owns the names. */
export type { ApiProtocol };

/** Features and limits of one service, as announced (all optional: "unknown" is omitted). */
export interface ServiceCapabilities {
  contextLength?: number;
  maxOutputTokens?: number;
  architecture?: string;
  inputModalities?: string[];
  outputModalities?: string[];
  toolUse?: boolean;
  supportedParameters?: string[];
}

/** Per-unit prices for image/video services (`serviceUnitBillingModels[serviceId]`). */
export interface UnitBillingModel {
  /** USD per generated image. */
  imageUsd?: number;
  /** USD per generated video. */
  videoUsd?: number;
}

/** One provider announcement. */
export interface ProviderAnnouncement {
  provider: string;
  services: string[];
  defaultPricing: TokenPricing;
  servicePricing?: Record<string, TokenPricing>;
  serviceCategories?: Record<string, string[]>;
  serviceApiProtocols?: Record<string, ApiProtocol[]>;
  serviceUnitBillingModels?: Record<string, UnitBillingModel>;
  serviceCapabilities?: Record<string, ServiceCapabilities>;
  maxConcurrency: number;
  currentLoad: number;
}

/** Peer-level capabilities. */
export interface PeerCapabilities {
  /** Largest request body the seller accepts; buyers answer 413 `upload_body_too_large` above it. */
  uploadLimitBytes: number;
  /** True for the built-in demo provider (no real model behind it). */
  demo?: boolean;
  /** Where this seller is paid; absent for sellers that only serve free offers. */
  payments?: { chainId: number; paymentsContract: `0x${string}` };
}

/** The unsigned body of a peer record. */
export interface UnsignedPeerMetadata {
  peerId: PeerId;
  version: number;
  displayName: string;
  providers: ProviderAnnouncement[];
  capabilities: PeerCapabilities;
  region?: string;
  /** Unix milliseconds when the record was signed. */
  timestamp: number;
  verifications?: Record<string, unknown>;
}

/** A signed peer record: signature over the RFC 8785 canonical JSON of the rest. */
export interface PeerMetadata extends UnsignedPeerMetadata {
  /** 0x-prefixed secp256k1 signature by the key whose address is `peerId`. */
  signature: `0x${string}`;
}

/** A peer the buyer knows about, with its verified metadata and reachability. */
export interface KnownPeer {
  metadata: PeerMetadata;
  /** False after a failed dial or metadata fetch; such peers are not routed to. */
  reachable: boolean;
  /** Unix ms of the last successful contact. */
  lastSeenAt: number;
  lastError?: string;
  /** Multiaddrs the peer was reached at. */
  addresses: string[];
}

/** Read side of discovery: the verified peer cache. */
export interface PeerDirectory {
  /** Every cached peer (reachable or not). */
  list(): KnownPeer[];
  get(peerId: PeerId): KnownPeer | undefined;
  /** Re-discovers providers and re-fetches metadata now. */
  refresh(): Promise<void>;
  /** Numbers for `/_svc/status`. */
  status(): {
    dhtNodeCount: number;
    peerCount: number;
    reachablePeerCount: number;
    lastRefreshAt?: number;
    /** Changes whenever the list or a peer's reachability does (for caches of derived views). */
    changes?: number;
  };
  /**
   * Calls `listener` with each peer seen alive again: a new connection, or a fresh record after
   * it was marked unreachable (what its connection failures earned no longer counts).
   */
  onBack?(listener: (peerId: PeerId) => void): void;
}

/** A request sent to a seller over `/svc/request/1`. */
export interface SellerRequest {
  method: string;
  /** API path at the seller, e.g. `/v1/chat/completions`. */
  path: string;
  /** Headers to forward; the sender has already removed client credentials and x-svc-* headers. */
  headers: Record<string, string>;
  body: Uint8Array;
  /** Payment fields for the seller (channel id, voucher...), opaque to the network layer. */
  payment?: Record<string, unknown>;
  /** Aborting resets the stream; the seller cancels its upstream call. */
  signal?: AbortSignal;
  /** Fail with a timeout error if no response head arrives within this many ms. */
  headTimeoutMs?: number;
  /**
   * Keep a copy of the response body, up to this many bytes, for `exchange().responseBody`
   * (the evidence of an audit); a longer body is not kept.
   */
  keepResponseBytes?: number;
}

/** What the seller claims after the body: the usage it will bill, counted from the upstream response. */
export interface SellerTrailer {
  usage?: TokenUsage;
  /** Cost the seller claims in micro-USD, as a decimal string of an integer. */
  costMicroUsd?: string;
  /** Set when the body ended early (upstream failure, cancel). */
  error?: string;
  /** The seller's signed receipt of this answer (src/network/receipts.ts). */
  receipt?: Receipt;
}

/** What the buyer sent and received, as the seller's receipt must cover it. */
export interface ReceivedExchange {
  /** This node's peer id: the buyer a receipt must name. */
  buyerPeerId: PeerId;
  requestHash: `0x${string}`;
  responseHash: `0x${string}`;
  /** The response body as received, when the request asked to keep it and it fit. */
  responseBody?: Uint8Array;
}

/** A seller's reply: head first, then body chunks (with backpressure), then the trailer. */
export interface SellerResponse {
  status: number;
  headers: Record<string, string>;
  body: AsyncIterable<Uint8Array>;
  /** Resolves once the body has been fully consumed (undefined if the seller sent none). */
  trailer: Promise<SellerTrailer | undefined>;
  /**
   * The exchange the receipt must cover, once the trailer arrived (undefined before, or when
   * the body was cut). Transports that carry receipts set it (the libp2p one does); answers of
   * a transport without it are not checked (the buyer's in-memory test network).
   */
  exchange?: () => ReceivedExchange | undefined;
}

/** Why a request to a seller failed at the transport level. */
export type TransportFailure =
  | 'unreachable'
  | 'reset'
  | 'timeout'
  | 'protocol'
  | 'too_large'
  | 'cancelled';

/** A transport failure; `beforeHead` tells the router whether failover is still allowed. */
export class TransportError extends Error {
  override name = 'TransportError';
  readonly failure: TransportFailure;
  readonly beforeHead: boolean;
  readonly peerId: PeerId;

  constructor(
    failure: TransportFailure,
    peerId: PeerId,
    message: string,
    options: { beforeHead: boolean; cause?: unknown },
  ) {
    super(message, { cause: options.cause });
    this.failure = failure;
    this.peerId = peerId;
    this.beforeHead = options.beforeHead;
  }
}

/** Sends requests to sellers. */
export interface PeerTransport {
  request(peerId: PeerId, request: SellerRequest): Promise<SellerResponse>;
}

/** What a node is for: decides its listeners, DHT mode and relay services. */
export type NodeRole = 'seller' | 'buyer' | 'bootstrap' | 'client';
