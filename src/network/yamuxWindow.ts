/**
 * Yamux window updates only when they matter. `@chainsafe/libp2p-yamux` answers every DATA
 * frame it receives with a WINDOW_UPDATE frame (its own Noise message, often its own TCP
 * write), so a request/response exchange costs each side one or two extra messages to encrypt,
 * send, receive and decrypt. Go's yamux (and the yamux spec's intent) sends an update only once
 * half of the receive window has been consumed; this does the same. Updates that carry a flag
 * (the SYN of a new stream, the ACK of an accepted one) and updates after a pause are sent as
 * before. The remote's send window never runs out: at most half the window is outstanding.
 * Bytes on the wire stay valid yamux; only the number of window updates changes.
 */
import { StreamState, YamuxStream } from '@chainsafe/libp2p-yamux/stream';

interface WindowFields {
  state: StreamState;
  recvWindow: number;
  recvWindowCapacity: number;
}

let installed = false;

/** Patches YamuxStream once per process (idempotent). */
export function installLazyWindowUpdates(): void {
  if (installed) return;
  installed = true;
  const proto = YamuxStream.prototype as unknown as {
    sendWindowUpdate(this: YamuxStream): void;
  };
  const original = proto.sendWindowUpdate;
  proto.sendWindowUpdate = function sendWindowUpdate(this: YamuxStream) {
    const fields = this as unknown as WindowFields;
    // A new stream's SYN and an accepted stream's ACK ride on its first frame (data or FIN)
    // instead of a window update of their own, unless the window itself needs updating.
    if (
      (fields.state === StreamState.Established ||
        fields.state === StreamState.Init ||
        fields.state === StreamState.SYNReceived) &&
      fields.recvWindowCapacity * 2 >= fields.recvWindow
    ) {
      return;
    }
    original.call(this);
  };
}
