/**
 * Verified records share their repeated parts. Most services of most sellers announce the same
 * protocol list and one of a few prices, and every one was a separate array or object: with
 * 1,000 cached sellers of 20 services, 20,000 of each (docs/decisions/155-buyer-memory-with-many-peers.md).
 * A part is replaced by an equal frozen one (same keys in the same order, so the record's JSON is
 * unchanged and its signature, over the canonical bytes, still verifies). Only for records nobody
 * else holds (parsed by the caller): the parts are frozen in place.
 */
import type { PeerMetadata } from '../types.js';

/** Distinct parts remembered; past it the table starts again (sharing is an optimisation). */
const SHARED_LIMIT = 4_096;
const shared = new Map<string, unknown>();

function share<T extends object>(part: T): T {
  const key = JSON.stringify(part);
  let known = shared.get(key) as T | undefined;
  if (known === undefined) {
    if (shared.size >= SHARED_LIMIT) shared.clear();
    known = Object.freeze(part);
    shared.set(key, known);
  }
  return known;
}

function shareValues<T extends object>(record: Record<string, T> | undefined): void {
  if (record === undefined) return;
  for (const key of Object.keys(record)) {
    // Assigning `__proto__` would set the prototype, not the own property.
    if (key !== '__proto__') record[key] = share(record[key] as T);
  }
}

/** Replaces the record's protocol lists and prices by shared equal ones, in place. */
export function shareRecordParts(metadata: PeerMetadata): void {
  for (const provider of metadata.providers) {
    provider.defaultPricing = share(provider.defaultPricing);
    shareValues(provider.servicePricing);
    shareValues(provider.serviceApiProtocols);
  }
}
