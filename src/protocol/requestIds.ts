/**
 * Request ids, made by the buyer for its own requests and by the gateway for its keys' (decision
 * 163), and the time part they share with the gateway's log ids: unix milliseconds as 12 hex
 * digits (48 bits, clamped), so ids made later sort later and the tables keyed by them grow at
 * their ends.
 */
import { randomFillSync } from 'node:crypto';

export function timeHex(at: number): string {
  return Math.max(0, Math.min(Math.floor(at), 0xffff_ffff_ffff))
    .toString(16)
    .padStart(12, '0');
}

const RANDOM_BYTES = 6;
/** Random bytes for request ids, filled 256 ids at a time: one system call instead of one each. */
const idPool = Buffer.alloc(RANDOM_BYTES * 256);
let idOffset = idPool.length;

/**
 * `req_` and 24 hex digits: 12 of unix milliseconds, then 12 random. The journal's key index
 * then grows at its end, as requests arrive, instead of taking each record at a random page.
 *
 * The one form for every request id, whoever makes it: a paid request carries its id to the
 * seller (the payment's `requestId`), and the buyer's audits of a gateway key's traffic are
 * made by the buyer, so ids of two forms told a seller which requests were audits
 * (docs/decisions/218-probe-tells-closed.md).
 */
export function newRequestId(now = Date.now()): string {
  if (idOffset === idPool.length) {
    randomFillSync(idPool);
    idOffset = 0;
  }
  const id = `${timeHex(now)}${idPool.toString('hex', idOffset, idOffset + RANDOM_BYTES)}`;
  idOffset += RANDOM_BYTES;
  return `req_${id}`;
}

/** `newRequestId`'s form, with its time. */
const ID_FORM = /^req_([0-9a-f]{12})[0-9a-f]{12}$/;

/** Most an id's time may stand from its request's arrival and still be copied (a day, in ms). */
export const MAX_ID_AGE_MS = 86_400_000;

/**
 * How long before `at` (unix ms) the request id was made, by the time it holds; undefined for an
 * id of another form, or one further than `MAX_ID_AGE_MS` either way. Negative when the maker's
 * clock is ahead of the reader's. A copy of the request is given an id as old
 * (docs/decisions/223-key-order-and-id-time.md).
 */
export function requestIdAge(id: string, at: number): number | undefined {
  const time = ID_FORM.exec(id)?.[1];
  if (time === undefined) return undefined;
  const age = Math.floor(at) - Number.parseInt(time, 16);
  return Math.abs(age) <= MAX_ID_AGE_MS ? age : undefined;
}
