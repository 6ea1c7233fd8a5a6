/** A probe copy as the buyer's proxy receives it, a seller's answer to it, and how one is sent. */
import type { ApiFormat } from '../formats/index.js';
import type { MicroUsd } from '../money/index.js';
import type { ProbeEvidence } from './verdict.js';

/** One copy of a probe, as the buyer's proxy receives it. */
export interface ProbeRequest {
  peerId: string;
  serviceId: string;
  identity: string;
  format: ApiFormat;
  path: string;
  headers: [string, string][];
  body: Uint8Array;
  maxCostUsd?: string;
  /** How long before it reaches the buyer its request id is made: the copied request's lag. */
  idAgeMs?: number;
}

/** A seller's answer to a probe copy. */
export interface ProbeReply {
  text: string;
  costMicro: MicroUsd;
  /** The seller's verified receipt, and the bytes it covers when they were kept. */
  receipt?: Record<string, unknown>;
  evidence?: ProbeEvidence;
}

export type SendProbe = (request: ProbeRequest, signal: AbortSignal) => Promise<ProbeReply>;
