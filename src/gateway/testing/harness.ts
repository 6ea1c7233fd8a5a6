/** Test harness: a stub buyer, a gateway in front of it, a store and a data dir; all stopped together. */
import { configSchema, type GatewayConfig } from '../../config/index.js';
import { IdentityStore } from '../../identity/index.js';
import { silentLogger } from '../../log/index.js';
import { removeTempDir, tempDir } from '../../testing/index.js';
import { type CreateKeyInput, createKey } from '../admin/createKey.js';
import {
  BACKGROUND_CHECKPOINT_MS,
  type RunningGateway,
  type StartGatewayOptions,
  startGateway,
} from '../server/startGateway.js';
import { createStore } from '../store/createStore.js';
import type { GatewayStore, KeyRecord } from '../store/types.js';
import { type StubBuyer, type StubBuyerOptions, startStubBuyer } from './stubBuyer.js';

export interface Harness {
  dataDir: string;
  buyer: StubBuyer;
  gateway: RunningGateway;
  store: GatewayStore;
  clock: { now: number };
  identities: IdentityStore;
  /** Creates a key through the admin path; returns it and its secret. */
  key(input?: Partial<CreateKeyInput>): Promise<{ key: KeyRecord; secret: string }>;
  /** fetch against the gateway with a bearer secret. */
  call(path: string, init?: RequestInit & { secret?: string | null }): Promise<Response>;
  stop(): Promise<void>;
}

export interface HarnessOptions {
  buyer?: StubBuyerOptions;
  gateway?: Partial<GatewayConfig>;
  /** PostgreSQL URL; default SQLite in the temp data dir. */
  databaseUrl?: string;
  /** Starting time (unix ms) of the injected clock; default the real clock. */
  now?: number;
  /** SQLite busy timeout (tests of a locked database). */
  sqliteBusyTimeoutMs?: number;
  /** The gateway's x402 top-up service (default: none, the route answers 501). */
  topups?: StartGatewayOptions['topups'];
  /** A real buyer in this process for the gateway to call without HTTP (the stub stays idle). */
  buyerInProcess?: StartGatewayOptions['buyer'];
}

/** Starts everything on loopback ports. */
export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const dataDir = tempDir('svc-gw-');
  const clock = { now: options.now ?? Date.now() };
  const now = options.now === undefined ? Date.now : () => clock.now;
  const buyer = await startStubBuyer(options.buyer);
  const store = await createStore({
    dataDir,
    databaseUrl: options.databaseUrl,
    now,
    sqliteBusyTimeoutMs: options.sqliteBusyTimeoutMs,
    sqliteBackgroundCheckpointMs: BACKGROUND_CHECKPOINT_MS,
  });
  const config = configSchema.parse({
    gateway: { port: 0, buyerUrl: buyer.url, ...options.gateway },
  }).gateway;
  const gateway = await startGateway({
    config,
    dataDir,
    store,
    clock: now,
    logger: silentLogger(),
    env: {},
    ...(options.topups ? { topups: options.topups } : {}),
    ...(options.buyerInProcess ? { buyer: options.buyerInProcess } : {}),
  });
  const identities = new IdentityStore(dataDir, {});
  return {
    dataDir,
    buyer,
    gateway,
    store,
    clock,
    identities,
    key: (input = {}) => createKey(store, identities, { label: 'test', ...input }, now()),
    call: (path, init = {}) => {
      const { secret, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (secret) headers.set('authorization', `Bearer ${secret}`);
      if (rest.body && !headers.has('content-type'))
        headers.set('content-type', 'application/json');
      return fetch(`${gateway.url}${path}`, { ...rest, headers });
    },
    async stop() {
      await gateway.stop();
      await buyer.stop();
      await store.close();
      removeTempDir(dataDir);
    },
  };
}

/** A JSON body in a test: asserted field by field, so it is deliberately untyped here. */
// biome-ignore lint/suspicious/noExplicitAny: test bodies are checked by assertions, not types
export type TestJson = any;

/** Reads a response body as JSON for assertions. */
export async function jsonOf(response: Response): Promise<TestJson> {
  return response.json();
}
