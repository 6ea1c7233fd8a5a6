/** The gateways connected to a tunnel relay: who registered, and how many requests each has open. */
import type { PeerId as Libp2pPeerId } from '@libp2p/interface';
import type { PeerId } from '../identity/index.js';

interface Entry {
  libp2pPeerId: Libp2pPeerId;
  open: number;
}

/** Registered gateways by peer id, with a per-gateway cap on open requests. */
export class GatewayRegistry {
  private readonly entries = new Map<PeerId, Entry>();
  private readonly maxOpen: number;

  constructor(maxOpenPerGateway: number) {
    this.maxOpen = maxOpenPerGateway;
  }

  register(gatewayId: PeerId, libp2pPeerId: Libp2pPeerId): void {
    const entry = this.entries.get(gatewayId);
    if (entry) entry.libp2pPeerId = libp2pPeerId;
    else this.entries.set(gatewayId, { libp2pPeerId, open: 0 });
  }

  /** Forgets the gateway whose libp2p connection went away. */
  disconnected(libp2pPeerId: Libp2pPeerId): void {
    for (const [id, entry] of this.entries) {
      if (entry.libp2pPeerId.equals(libp2pPeerId)) this.entries.delete(id);
    }
  }

  lookup(gatewayId: PeerId): Libp2pPeerId | undefined {
    return this.entries.get(gatewayId)?.libp2pPeerId;
  }

  /** Takes a request slot; false when the gateway is unknown or at its cap. */
  acquire(gatewayId: PeerId): 'ok' | 'offline' | 'busy' {
    const entry = this.entries.get(gatewayId);
    if (!entry) return 'offline';
    if (entry.open >= this.maxOpen) return 'busy';
    entry.open++;
    return 'ok';
  }

  release(gatewayId: PeerId): void {
    const entry = this.entries.get(gatewayId);
    if (entry && entry.open > 0) entry.open--;
  }

  ids(): PeerId[] {
    return [...this.entries.keys()];
  }
}
