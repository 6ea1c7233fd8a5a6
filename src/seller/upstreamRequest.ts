/**
 * undici's `request`, loaded on the first upstream call. The seller code is linked into processes
 * that never relay (the buyer, through the payments wiring); they no longer load undici, about
 * 220 modules and ~20 MiB of RSS.
 */
import type { request } from 'undici';

let loading: Promise<typeof request> | undefined;

/** The undici `request` function (imported once, on first use). */
export function upstreamRequest(): Promise<typeof request> {
  loading ??= import('undici').then((undici) => undici.request);
  return loading;
}
