/** Protocol ids and the well-known DHT key of svc. */
import { CID } from 'multiformats/cid';
import * as raw from 'multiformats/codecs/raw';
import { sha256 } from 'multiformats/hashes/sha2';

/** A seller's signed metadata record, sent on request. */
export const META_PROTOCOL = '/svc/meta/1';
/** The sellers a node is connected to (a discovery hint, decision 012). */
export const PEERS_PROTOCOL = '/svc/peers/1';
/** One request per stream. */
export const REQUEST_PROTOCOL = '/svc/request/1';
/** `/svc/request/1`'s frames, requests one after another on a kept stream (decision 190). */
export const REQUEST_STREAMS_PROTOCOL = '/svc/request/2';
/** The DHT key every seller provides; its preimage names the record family and version. */
export const SELLERS_KEY_PREIMAGE = 'svc/sellers/v1';

let sellersKey: CID | undefined;

/** CID of sha256("svc/sellers/v1"), the key sellers `provide` and buyers `findProviders` on. */
export async function sellersDhtKey(): Promise<CID> {
  sellersKey ??= CID.create(
    1,
    raw.code,
    await sha256.digest(new TextEncoder().encode(SELLERS_KEY_PREIMAGE)),
  );
  return sellersKey;
}
