/** The last N request records, for `GET /_svc/requests/<id>`. */
import type { TokenUsage } from '../money/index.js';

export interface RequestRecord {
  requestId: string;
  status: number;
  completed: boolean;
  streamed: boolean;
  peerId: string | null;
  provider: string | null;
  serviceId: string | null;
  model: string | null;
  usage: TokenUsage;
  costUsd: string;
  latencyMs: number;
  errorCode?: string;
  attempts: string[];
}

/** A bounded map; the oldest record is dropped first. */
export class RequestRecords {
  private readonly records = new Map<string, RequestRecord>();

  constructor(private readonly capacity = 10_000) {}

  put(record: RequestRecord): void {
    this.records.delete(record.requestId);
    this.records.set(record.requestId, record);
    if (this.records.size > this.capacity) {
      const oldest = this.records.keys().next().value;
      if (oldest !== undefined) this.records.delete(oldest);
    }
  }

  get(requestId: string): RequestRecord | undefined {
    return this.records.get(requestId);
  }

  get size(): number {
    return this.records.size;
  }
}
