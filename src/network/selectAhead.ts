/**
 * Noise proposed and begun in one flight. Before encrypting an outbound connection, libp2p's
 * upgrader proposes `/noise` with multistream-select and waits for the answer before Noise sends
 * its first message: a whole round trip for a negotiation whose answer is known (Noise is the one
 * encrypter every svc node offers). Here, when the dialling side's first write is exactly that
 * proposal (`/multistream/1.0.0`, then `/noise`), the connection answers it at once with the echo
 * an accepting peer sends, so Noise's first message leaves with the proposal (the "lazy" select
 * of other libp2p implementations; the listener reads the proposal, echoes it and finds Noise's
 * message behind it, as it does from those). The real answer is then checked byte for byte
 * against that echo and taken out of what Noise reads; an answer that differs (`na`, anything
 * else) aborts the connection, and the dial fails as a refused proposal would have.
 *
 * Nothing the handshake proves changes: multistream-select is unauthenticated either way, and
 * Noise still refuses a peer without the dialled identity key
 * (docs/decisions/210-a-new-connection-with-an-honest-distance.md).
 */

/** The encrypter proposed ahead: the only one svc nodes configure. */
const NOISE = '/noise';

/** `lines` as multistream-select writes them: each a varint length, the line and a newline. */
function proposalOf(lines: string[]): Uint8Array {
  const parts = lines.map((line) => Buffer.from(`${line}\n`));
  // One-byte varints: every line here is shorter than 128 bytes.
  return Buffer.concat(parts.flatMap((part) => [Buffer.of(part.byteLength), part]));
}

const PROPOSAL = proposalOf(['/multistream/1.0.0', NOISE]);

/** The parts of `AbstractMessageStream` (`@libp2p/utils`) answered ahead. */
interface Answerable {
  send(data: Uint8Array | { subarray(): Uint8Array }): boolean;
  onData(data: Uint8Array | { subarray(): Uint8Array }): void;
  abort(error: Error): void;
}

function isAnswerable(value: unknown): value is Answerable {
  const stream = value as Partial<Answerable> | null;
  return (
    typeof stream?.send === 'function' &&
    typeof stream.onData === 'function' &&
    typeof stream.abort === 'function'
  );
}

const bytesOf = (data: Uint8Array | { subarray(): Uint8Array }) =>
  data instanceof Uint8Array ? data : data.subarray();

/**
 * Makes the outbound connection `maConn` answer its own `/noise` proposal (see above). Returns
 * false (and changes nothing) when it is not a stream of the kind expected.
 */
export function answerNoiseProposalAhead(maConn: unknown): boolean {
  if (!isAnswerable(maConn)) return false;
  const conn = maConn;
  const send = conn.send;
  const onData = conn.onData;
  conn.send = (data) => {
    // Only the connection's first write can be the proposal.
    conn.send = send;
    if (!Buffer.from(bytesOf(data)).equals(PROPOSAL)) return send.call(conn, data);
    let checked = 0;
    // The real answer, when it comes: the echo is checked and dropped, the rest read.
    conn.onData = (received) => {
      const bytes = bytesOf(received);
      const owed = PROPOSAL.byteLength - checked;
      const part = bytes.subarray(0, owed);
      if (!Buffer.from(part).equals(PROPOSAL.subarray(checked, checked + part.byteLength))) {
        conn.onData = onData;
        conn.abort(new Error(`the remote did not accept ${NOISE}`));
        return;
      }
      checked += part.byteLength;
      if (checked < PROPOSAL.byteLength) return;
      conn.onData = onData;
      if (bytes.byteLength > owed) onData.call(conn, bytes.subarray(owed));
    };
    const sent = send.call(conn, data);
    // Once the proposal is on its way: the answer an accepting peer gives.
    queueMicrotask(() => onData.call(conn, Buffer.from(PROPOSAL)));
    return sent;
  };
  return true;
}
