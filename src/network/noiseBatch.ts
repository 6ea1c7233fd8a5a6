/**
 * One Noise message for all the muxer frames of one event-loop phase. `@chainsafe/libp2p-noise`
 * encrypts every `send` on its own: each yamux frame (a stream's ACK, each multistream-select
 * line, the data, the FIN) became its own Noise message, i.e. its own length prefix, cipher
 * creation and Poly1305 tag, and a request cost each side 3–5 encryptions and as many
 * decryptions at the other end. Noise's receiver cuts the byte stream into messages and hands
 * the muxer their plaintext as one byte stream, so frames may be split across messages or
 * share one in any way: here the frames sent while the event loop runs one phase are queued and
 * encrypted together once it is done (`setImmediate`, when the TCP socket's corked writes
 * left before, see corkedTcp.ts), and the resulting messages leave in one write. A queue that
 * reaches one Noise message's size, a connection waiting for drain and a `close` (of the secured
 * connection or of the one under it) are sent at once;
 * the bytes, their order and backpressure are unchanged (decision 158).
 */
import type { Uint8ArrayList } from 'uint8arraylist';
import { beforeUncork, sendTogether } from './corkedTcp.js';

/** Noise's largest plaintext per message (65,535 minus the 16-byte tag). */
const MESSAGE_PLAINTEXT_BYTES = 65_519;

/** The parts of `AbstractMessageStream` (from `@libp2p/utils`) the batching relies on. */
interface SendQueue {
  writeBuffer: Uint8ArrayList;
  writableNeedsDrain: boolean;
  sendingData: boolean;
  writeStatus: string;
  status: string;
  processSendQueue(): boolean;
  send(data: Uint8Array | Uint8ArrayList): boolean;
  close(options?: unknown): Promise<void>;
  /** The connection Noise writes its messages to. */
  stream?: unknown;
}

function isSendQueue(value: unknown): value is SendQueue {
  const queue = value as Partial<SendQueue> | null;
  return (
    typeof queue?.processSendQueue === 'function' &&
    typeof queue.send === 'function' &&
    typeof queue.close === 'function' &&
    typeof queue.writeBuffer?.append === 'function' &&
    typeof queue.writableNeedsDrain === 'boolean' &&
    typeof queue.sendingData === 'boolean'
  );
}

/**
 * Makes the secured `connection` (Noise's message stream) encrypt the frames of one event-loop
 * phase as one message; returns false (and changes nothing) when it is not the stream expected.
 */
export function batchNoiseWrites(connection: unknown): boolean {
  if (!isSendQueue(connection)) return false;
  const queue = connection;
  const send = queue.send;
  const close = queue.close;
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (queue.writeBuffer.byteLength === 0 || queue.writableNeedsDrain) return;
    if (queue.status !== 'open' || queue.writeStatus !== 'writable') return;
    try {
      sendTogether(queue.stream, () => queue.processSendQueue());
    } catch {
      // processSendQueue aborted the connection (what a direct send would have done).
    }
  };
  queue.send = (data) => {
    if (
      queue.writeStatus !== 'writable' ||
      queue.writableNeedsDrain ||
      queue.sendingData ||
      queue.writeBuffer.byteLength + data.byteLength >= MESSAGE_PLAINTEXT_BYTES
    ) {
      // Closing (throws as before), backpressure, or a full message: queued bytes go first.
      return send.call(queue, data);
    }
    queue.writeBuffer.append(data);
    if (!scheduled) {
      scheduled = true;
      // Bytes the connection under it holds corked for this phase (Noise's last handshake
      // message) and these frames leave in one write.
      if (!beforeUncork(queue.stream, flush)) setImmediate(flush);
    }
    return true;
  };
  queue.close = (options) => {
    flush();
    return close.call(queue, options);
  };
  // libp2p closes a connection through its raw one (after the muxer's FINs): those go first.
  const underlying = queue.stream as { close?: (options?: unknown) => Promise<void> } | undefined;
  const closeUnderlying = underlying?.close;
  if (underlying !== undefined && typeof closeUnderlying === 'function') {
    underlying.close = (options) => {
      flush();
      return closeUnderlying.call(underlying, options);
    };
  }
  return true;
}
