import { generateKeyPair } from '@libp2p/crypto/keys';
import type { Libp2p, Peer, PeerData, PeerId } from '@libp2p/interface';
import { peerIdFromPrivateKey } from '@libp2p/peer-id';
import { describe, expect, it } from 'vitest';
import { skipRepeatedProtocolMerges } from './protocolMerges.js';

/** A node whose peer store records merges and emits `peer:update` when a merge changes a peer. */
function fakeNode() {
  const target = new EventTarget();
  const protocols = new Map<string, Set<string>>();
  const calls: PeerData[] = [];
  const peerStore = {
    async merge(id: PeerId, data: PeerData): Promise<Peer> {
      calls.push(data);
      const known = protocols.get(id.toString()) ?? new Set<string>();
      const before = known.size;
      for (const protocol of data.protocols ?? []) known.add(protocol);
      protocols.set(id.toString(), known);
      const peer = { id, protocols: [...known] } as unknown as Peer;
      if (known.size !== before || data.protocols === undefined)
        target.dispatchEvent(new CustomEvent('peer:update', { detail: { peer } }));
      return peer;
    },
  };
  const node = Object.assign(target, { peerStore }) as unknown as Libp2p;
  return { node, calls, target };
}

describe('protocol merges per stream', () => {
  it('merges a peer and protocol once, again after an update, a new protocol or a minute', async () => {
    const { node, calls, target } = fakeNode();
    let now = 1_000;
    skipRepeatedProtocolMerges(node, () => now);
    const peer = peerIdFromPrivateKey(await generateKeyPair('Ed25519'));
    const other = peerIdFromPrivateKey(await generateKeyPair('Ed25519'));
    const merge = (id: PeerId, data: PeerData) => node.peerStore.merge(id, data);

    const first = await merge(peer, { protocols: ['/svc/request/1'] });
    expect(first.protocols).toEqual(['/svc/request/1']);
    expect((await merge(peer, { protocols: ['/svc/request/1'] })).protocols).toEqual([
      '/svc/request/1',
    ]);
    expect(calls).toHaveLength(1);

    await merge(other, { protocols: ['/svc/request/1'] });
    await merge(peer, { protocols: ['/ipfs/ping/1.0.0'] });
    expect(calls).toHaveLength(3);
    // Both protocols are now known for `peer`: neither merges again.
    await merge(peer, { protocols: ['/svc/request/1'] });
    await merge(peer, { protocols: ['/ipfs/ping/1.0.0'] });
    expect(calls).toHaveLength(3);

    // Anything else libp2p merges always goes through.
    await merge(peer, { metadata: { a: new Uint8Array([1]) } });
    expect(calls).toHaveLength(4);
    await merge(peer, { protocols: ['/svc/request/1'] });
    expect(calls).toHaveLength(5);

    // Another change to the peer (identify, say) forgets what was merged.
    target.dispatchEvent(
      new CustomEvent('peer:update', { detail: { peer: { id: peer, protocols: [] } } }),
    );
    await merge(peer, { protocols: ['/svc/request/1'] });
    expect(calls).toHaveLength(6);
    await merge(peer, { protocols: ['/svc/request/1'] });
    expect(calls).toHaveLength(6);

    now += 60_000;
    await merge(peer, { protocols: ['/svc/request/1'] });
    expect(calls).toHaveLength(7);
  });
});
