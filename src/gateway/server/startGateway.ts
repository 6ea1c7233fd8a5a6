/** The gateway service: an HTTP server in front of the buyer, with start/stop. */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { Pool } from 'undici';
import type { GatewayConfig } from '../../config/index.js';
import { SvcError } from '../../errors/index.js';
import { API_INGRESS, boundIngress, localUrl } from '../../http/index.js';
import { IdentityStore } from '../../identity/index.js';
import type { Logger } from '../../log/index.js';
import { parseUsd } from '../../money/index.js';
import type { InProcessBuyer } from '../../protocol/index.js';
import type { TopupService } from '../../x402/index.js';
import { handleConsole, isConsolePath } from '../console/index.js';
import { createStore } from '../store/createStore.js';
import type { GatewayStore } from '../store/types.js';
import { AuthThrottle } from './authThrottle.js';
import { ensureControlSecret } from './controlSecret.js';
import type { GatewayDeps } from './deps.js';
import { ForwardedTrust } from './forwarded.js';
import { handleRequest } from './handleRequest.js';
import { LogWriter } from './logWriter.js';
import { PriceBook } from './priceBook.js';
import { recoverReservations } from './recoverReservations.js';

export interface StartGatewayOptions {
  config: GatewayConfig;
  dataDir: string;
  /** An open store; default: opened from config.databaseUrl or the data dir (and closed on stop). */
  store?: GatewayStore;
  /** Injected clock (unix ms) for budgets, expiry and logs. */
  clock?: () => number;
  logger: Logger;
  /** Environment for identity references (default process.env). */
  env?: NodeJS.ProcessEnv;
  /**
   * Builds the x402 top-up service once the store is open (see createTopupService in src/x402);
   * started (pending top-ups reconciled) before listening, stopped on stop.
   */
  topups?: (store: GatewayStore) => Promise<TopupService | undefined>;
  /**
   * The buyer running in this process (src/node/startGatewayNode.ts): its loopback URL and its
   * in-process face. Absent = the remote buyer at config.buyerUrl.
   */
  buyer?: { url: string; inProcess: InProcessBuyer };
}

export interface RunningGateway {
  /** Base URL, e.g. http://127.0.0.1:8379 (the OpenAI-style base is `${url}/v1`). */
  url: string;
  store: GatewayStore;
  /**
   * Per-process secret the gateway's tunnel client sends on its loopback hop, so the gateway
   * believes the tunnel relay's X-Forwarded-* headers (src/gateway/server/forwarded.ts).
   */
  tunnelToken: string;
  stop(): Promise<void>;
}

const HOUR_MS = 3_600_000;
/** How often a gateway's SQLite WAL is checkpointed off the request path (decision 099). */
export const BACKGROUND_CHECKPOINT_MS = 500;

const RECOVER_EVERY_MS = 60_000;

/** Starts the gateway on config.host:config.port (0 = a free port). */
export async function startGateway(options: StartGatewayOptions): Promise<RunningGateway> {
  const { config, dataDir, logger } = options;
  const buyerUrl = buyerUrlOf(options);
  const now = options.clock ?? Date.now;
  const ownsStore = !options.store;
  const store = options.store ?? (await openStore(config, dataDir, now));
  const topups = await startTopups(options, store, ownsStore);
  const identities = new IdentityStore(dataDir, options.env ?? process.env);
  const tunnelToken = randomBytes(24).toString('base64url');
  const deps = gatewayDeps(options, { store, topups, identities, tunnelToken, now, buyerUrl });
  const upkeep = await startUpkeep(deps);
  const server = await listen(deps, identities);
  const url = localUrl(server, config.host);
  logger.info(
    { url, buyer: options.buyer ? 'in process' : config.buyerUrl, store: store.kind },
    'gateway listening',
  );
  return {
    url,
    store,
    tunnelToken,
    async stop() {
      upkeep.stop();
      await topups?.stop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await deps.buyer.close();
      await deps.logs.close();
      if (ownsStore) await store.close();
    },
  };
}

function openStore(
  config: GatewayConfig,
  dataDir: string,
  now: () => number,
): Promise<GatewayStore> {
  return createStore({
    dataDir,
    databaseUrl: config.databaseUrl,
    now,
    sqliteBackgroundCheckpointMs: BACKGROUND_CHECKPOINT_MS,
  });
}

/** Builds and starts the x402 top-up service, if any; closes a store it owns when that fails. */
async function startTopups(
  options: StartGatewayOptions,
  store: GatewayStore,
  ownsStore: boolean,
): Promise<TopupService | undefined> {
  let topups: TopupService | undefined;
  try {
    topups = options.topups ? await options.topups(store) : undefined;
    await topups?.start();
  } catch (error) {
    if (ownsStore) await store.close();
    throw error;
  }
  return topups;
}

/** What the gateway opened before its dependencies are assembled. */
interface Opened {
  store: GatewayStore;
  topups: TopupService | undefined;
  identities: IdentityStore;
  tunnelToken: string;
  now: () => number;
  buyerUrl: string;
}

function gatewayDeps(options: StartGatewayOptions, opened: Opened): GatewayDeps {
  const { config, dataDir, logger } = options;
  const { store, topups, identities, tunnelToken, now } = opened;
  const buyer = new Pool(opened.buyerUrl, { connections: 128, pipelining: 1 });
  const controlSecret = ensureControlSecret(dataDir);
  return {
    store,
    buyer,
    config,
    controlSecret,
    maxRequestCostMicro: parseUsd(config.maxRequestCostUsd),
    prices: new PriceBook(buyer, { 'x-svc-gateway-auth': controlSecret }, now),
    now,
    logger,
    throttle: new AuthThrottle(config.authFailuresPerMinute, now),
    forwarded: new ForwardedTrust(config.trustedProxies, tunnelToken),
    topups,
    inProcess: options.buyer?.inProcess,
    logs: new LogWriter(store, logger),
    buyerAddress: cachedBuyerAddresses(identities),
  };
}

/** Where the buyer listens: the in-process buyer's loopback listener, or config.buyerUrl. */
function buyerUrlOf(options: StartGatewayOptions): string {
  const url = options.buyer?.url ?? options.config.buyerUrl;
  if (url) return url;
  throw new SvcError('invalid_config', {
    message:
      'The gateway has no buyer: `svc gateway start` runs one in its process, or set gateway.buyerUrl (--buyer-url) to a running buyer.',
  });
}

/** An identity's wallet address, looked up once per identity. */
function cachedBuyerAddresses(identities: IdentityStore): (identity: string) => string {
  const addresses = new Map<string, string>();
  return (identity) => {
    let address = addresses.get(identity);
    if (!address) {
      address =
        identity === 'default'
          ? identities.loadDefault().record.address
          : (identities.list().find((listing) => listing.name === identity)?.address ?? '');
      if (address) addresses.set(identity, address);
    }
    return address;
  };
}

/** Prunes old logs and recovers orphaned reservations now, then hourly and every minute. */
async function startUpkeep(deps: GatewayDeps): Promise<{ stop(): void }> {
  const { store, buyer, config, now, logger } = deps;
  const prune = async () => {
    try {
      await store.pruneLogs(now() - config.logRetentionDays * 24 * HOUR_MS);
    } catch (error) {
      logger.warn({ err: error }, 'request log pruning failed');
    }
  };
  // Orphaned reservations (a gateway stopped between reserve and settle) are settled from the
  // buyer's journal within about a minute (docs/decisions/122-request-journal.md).
  const recover = async () => {
    try {
      await recoverReservations({ store, buyer, now: now(), staleAfterMs: HOUR_MS, logger });
    } catch (error) {
      logger.warn({ err: error }, 'reservation recovery failed');
    }
  };
  await prune();
  await recover();
  const pruneTimer = setInterval(prune, HOUR_MS);
  pruneTimer.unref();
  const recoverTimer = setInterval(recover, RECOVER_EVERY_MS);
  recoverTimer.unref();
  return {
    stop() {
      clearInterval(pruneTimer);
      clearInterval(recoverTimer);
    },
  };
}

/** The HTTP server (API and web console), listening on config.host:config.port. */
async function listen(deps: GatewayDeps, identities: IdentityStore): Promise<Server> {
  const { config } = deps;
  const consoleDeps = { ...deps, identities };
  const server = createServer((req, res) => {
    // The web console shares the origin and the store (docs/decisions/135-console-sign-in.md).
    if (isConsolePath((req.url ?? '/').split('?')[0] ?? '/'))
      void handleConsole(consoleDeps, req, res);
    else void handleRequest(deps, req, res);
  });
  // A slow client holds a slot at most this long (docs/guide/gateway.md "Gateway"): headers within 30 s, the
  // whole request (body included, not the answer) within 120 s.
  boundIngress(server, API_INGRESS);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  return server;
}
