/**
 * Noise without an exception per read. `@chainsafe/libp2p-noise` cuts the bytes it receives into
 * messages with `@libp2p/utils`' `LengthPrefixedDecoder`, which calls its length decoder until
 * that throws a RangeError ("not enough bytes for a length"). A read almost always ends on a
 * message boundary (or a byte after one), so every read from a connection threw a RangeError and
 * captured its stack trace (~2 % of the buyer's and the seller's CPU per request); one made once
 * for an empty buffer still cost the throw. For fewer than the two bytes of a length, the length
 * decoder here answers a length of 0: the decoder then wants two bytes for the message and has
 * fewer, so it stops reading and waits for more, exactly as after the RangeError, without throwing (docs/decisions/213-what-a-new-connection-still-costs.md).
 * Two or more bytes go to the library's decoder as before: the bytes and messages are unchanged.
 */
import {
  type NoiseComponents,
  type NoiseExtensions,
  type NoiseInit,
  noise,
} from '@chainsafe/libp2p-noise';
import type { ConnectionEncrypter, SecuredConnection } from '@libp2p/interface';
import { expectingDialledPeer } from './dialledPeer.js';
import { showUncompressed } from './keys.js';
import { batchNoiseWrites } from './noiseBatch.js';

type LengthDecoder = (data: { byteLength: number }) => number;

/** The bytes of a Noise message's length prefix (a big-endian uint16). */
const LENGTH_BYTES = 2;

interface Decoder {
  lengthDecoder?: unknown;
  encodingLength?: unknown;
}

/**
 * Gives the decoder of a secured connection (the library's private `decoder` field) the length
 * decoder that does not throw. Answering 0 stops the decoder only because it then counts the
 * length prefix as two bytes, more than it holds: a decoder that counts it otherwise, or a
 * connection without one, is left as it is.
 */
export function quietDecoder<T extends SecuredConnection<NoiseExtensions>>(secured: T): T {
  const decoder = (secured.connection as unknown as { decoder?: Decoder }).decoder;
  if (typeof decoder?.lengthDecoder !== 'function') return secured;
  if (typeof decoder.encodingLength !== 'function') return secured;
  if ((decoder.encodingLength as (length: number) => unknown)(0) !== LENGTH_BYTES) return secured;
  const inner = decoder.lengthDecoder as LengthDecoder;
  const lengthDecoder: LengthDecoder = (data) => {
    if (data.byteLength < LENGTH_BYTES) return 0;
    return inner(data);
  };
  decoder.lengthDecoder = lengthDecoder;
  return secured;
}

/** The secured connection with `quietDecoder` and its writes batched (noiseBatch.ts). */
function tuned<T extends SecuredConnection<NoiseExtensions>>(secured: T): T {
  batchNoiseWrites(secured.connection);
  return quietDecoder(secured);
}

/** The components with the identity key shown uncompressed in handshakes (keys.ts). */
function showingUncompressed(components: NoiseComponents): NoiseComponents {
  const privateKey = showUncompressed(components.privateKey);
  return new Proxy(components, {
    get: (target, property) =>
      property === 'privateKey' ? privateKey : Reflect.get(target, property),
  });
}

/**
 * `noise(init)` whose secured connections decode with `quietDecoder` and batch writes, whose
 * handshakes show the identity key uncompressed, and which expects the dialled peer a dial hands
 * over (dialledPeer.ts).
 */
export function quietNoise(
  init: NoiseInit,
): (components: NoiseComponents) => ConnectionEncrypter<NoiseExtensions> {
  const make = noise(init);
  return (components) => {
    const encrypter = make(showingUncompressed(components));
    const outbound = encrypter.secureOutbound.bind(encrypter);
    const inbound = encrypter.secureInbound.bind(encrypter);
    encrypter.secureOutbound = async (connection, options) =>
      tuned(await outbound(connection, options));
    encrypter.secureInbound = async (connection, options) =>
      tuned(await inbound(connection, options));
    return expectingDialledPeer(encrypter);
  };
}
