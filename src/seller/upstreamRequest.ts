/**
 * undici's global dispatcher, its module loaded on the first upstream call. The seller code is
 * linked into processes that never relay (the buyer, through the payments wiring); they no longer
 * load undici, about 220 modules and ~20 MiB of RSS.
 */
import type { Dispatcher } from 'undici';

type Undici = typeof import('undici');

let loading: Promise<Undici> | undefined;
let loaded: Undici | undefined;

/** undici's global dispatcher: at once once undici is loaded, a promise the first time. */
export function upstreamDispatcher(): Dispatcher | Promise<Dispatcher> {
  if (loaded !== undefined) return loaded.getGlobalDispatcher();
  loading ??= import('undici').then((undici) => {
    loaded = undici;
    return undici;
  });
  return loading.then((undici) => undici.getGlobalDispatcher());
}
