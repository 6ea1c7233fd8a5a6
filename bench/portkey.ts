/**
 * The peer the compare bench measures svc against: Portkey's open-source gateway (npm
 * `@portkey-ai/gateway`), started offline from node_modules.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { startChild } from './lib.js';

/**
 * Portkey 1.15.2 on Node answers every OpenAI-provider stream with 500 "Something went wrong"
 * (TypeError: immutable: it appends headers to the fetch Response's immutable Headers; Portkey's
 * issues #1389 and #1550). This preload gives streamed upstream answers a mutable copy of their
 * headers, as Portkey's own fix does; JSON answers are untouched.
 */
const PORTKEY_STREAM_FIX = `data:text/javascript,${encodeURIComponent(`
const fetch0 = globalThis.fetch;
globalThis.fetch = async (...args) => {
  const r = await fetch0(...args);
  if (!(r.headers.get('content-type') ?? '').startsWith('text/event-stream')) return r;
  return new Response(r.body, { status: r.status, statusText: r.statusText, headers: new Headers(r.headers) });
};`)}`;

/** Portkey's gateway from node_modules, on its default routes, headless (no UI, no network). */
export async function startPortkey(stops: Array<() => Promise<void>>, port: number) {
  const require = createRequire(import.meta.url);
  const root = dirname(require.resolve('@portkey-ai/gateway/package.json'));
  const portkey = await startChild(
    [
      '--import',
      PORTKEY_STREAM_FIX,
      join(root, 'build/start-server.js'),
      `--port=${port}`,
      '--headless',
    ],
    (output) => (output.includes('Ready for connections') ? true : undefined),
    { env: { ...process.env, NODE_ENV: 'production' } },
  );
  stops.unshift(() => portkey.stop());
  return portkey.pid;
}
