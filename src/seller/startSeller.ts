/**
 * A running seller: a libp2p node (role seller) that announces its signed record on the DHT,
 * serves `/svc/meta/1` and `/svc/request/1`, and re-signs its record when load or prices
 * change (debounced) and periodically, so buyers never hold a stale one.
 */
import { type Hex, hashMessage, hexToBytes, type LocalAccount } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { NetworkConfig, SellerConfig } from '../config/index.js';
import { SvcError } from '../errors/index.js';
import { signDigest } from '../identity/index.js';
import { type Logger, silentLogger } from '../log/index.js';
import {
  type Announcer,
  createSvcNode,
  encodeMetadata,
  type PeerMetadata,
  type ReceiptIssuer,
  type RequestServer,
  receiptIssuer,
  type SvcNode,
  serveRequests,
  signMetadata,
  startAnnouncing,
} from '../network/index.js';
import { createSellerHandler, type RuntimeProvider } from './handler.js';
import { buildMetadata, providerName } from './metadata.js';
import { AdmitAllPayments, type SellerPayments } from './payments.js';
import { PROVIDER_KINDS } from './providers.js';

export interface StartSellerOptions {
  /** The identity's private key (e.g. `IdentityStore.loadDefault()`). */
  identity: { privateKey: Hex };
  seller: SellerConfig;
  network: NetworkConfig;
  /** Where `apiKeyEnv` variables are read (default process.env). */
  env?: NodeJS.ProcessEnv;
  payments?: SellerPayments;
  logger?: Logger;
  /** Re-sign interval for freshness (default 10 min; records older than 30 min are refused). */
  resignIntervalMs?: number;
  /**
   * Who signs each answer's receipt (default: the identity key, `receiptIssuer`). Tests pass a
   * hostile one (src/seller/testing/hostileReceipts.ts).
   */
  receipts?: ReceiptIssuer;
}

export interface SellerHandle {
  node: SvcNode;
  /** The record being served now. */
  metadata(): PeerMetadata;
  /** Requests in flight per provider (config order). */
  loads(): number[];
  /** Replaces the seller config (prices, services, limits) and re-signs at once. */
  updateConfig(seller: SellerConfig): Promise<void>;
  /** Re-signs now (e.g. before a test reads the record). */
  republish(): Promise<PeerMetadata>;
  stop(): Promise<void>;
}

/** Load changes are re-signed at most this often (signing costs CPU; buyers poll slower). */
const LOAD_DEBOUNCE_MS = 500;

/** Resolves keys and base URLs; fails loudly on a missing key variable or base URL. */
export function runtimeProviders(seller: SellerConfig, env: NodeJS.ProcessEnv): RuntimeProvider[] {
  return seller.providers.map((config) => {
    const kind = PROVIDER_KINDS[config.type];
    let apiKey: string | undefined;
    if (config.apiKeyEnv !== undefined) {
      apiKey = env[config.apiKeyEnv];
      if (apiKey === undefined || apiKey === '') {
        throw new SvcError('invalid_config', {
          message: `provider ${providerName(config)}: environment variable ${config.apiKeyEnv} (apiKeyEnv) is not set; export it with the upstream API key`,
        });
      }
    }
    const baseUrl = config.baseUrl ?? kind.defaultBaseUrl;
    if (config.type !== 'demo' && config.type !== 'systemone' && baseUrl === undefined) {
      throw new SvcError('invalid_config', {
        message: `provider ${providerName(config)}: baseUrl is required`,
      });
    }
    return { config, kind, name: providerName(config), baseUrl, apiKey, load: { active: 0 } };
  });
}

/** The signed record a seller serves, re-signed on demand and (debounced) when its load changes. */
interface RecordKeeper {
  current(): PeerMetadata;
  bytes(): Uint8Array;
  republish(): Promise<PeerMetadata>;
  onLoadChange(): void;
  stop(): void;
}

async function keepRecord(sign: () => Promise<PeerMetadata>): Promise<RecordKeeper> {
  let current = await sign();
  let currentBytes = encodeMetadata(current);
  const republish = async (): Promise<PeerMetadata> => {
    current = await sign();
    currentBytes = encodeMetadata(current);
    return current;
  };
  let debounce: NodeJS.Timeout | undefined;
  return {
    current: () => current,
    bytes: () => currentBytes,
    republish,
    onLoadChange() {
      if (debounce) return;
      debounce = setTimeout(() => {
        debounce = undefined;
        void republish();
      }, LOAD_DEBOUNCE_MS);
      debounce.unref();
    },
    stop() {
      if (debounce) clearTimeout(debounce);
    },
  };
}

/** Serves requests and announces the record; stops the node when either fails to start. */
async function serveAndAnnounce(
  node: SvcNode,
  handler: ReturnType<typeof createSellerHandler>,
  serving: { uploadLimitBytes: () => number; receipts: ReceiptIssuer },
  record: RecordKeeper,
): Promise<{ server: RequestServer; announcer: Announcer }> {
  try {
    const server = await serveRequests(node, handler, serving);
    const announcer = await startAnnouncing(node, record.bytes);
    return { server, announcer };
  } catch (error) {
    await node.stop();
    throw error;
  }
}

/** The providers of a new config, keeping the load objects of the ones that stay. */
function carryLoads(next: RuntimeProvider[], previous: RuntimeProvider[]): RuntimeProvider[] {
  for (const provider of next) {
    const same = previous.find(
      (p) => p.name === provider.name && p.config.type === provider.config.type,
    );
    // In-flight requests keep counting on the same load object.
    if (same) provider.load = same.load;
  }
  return next;
}

/**
 * The identity's account, its `signMessage` in libsecp256k1 (`signDigest`): a loaded seller
 * re-signs its record every 500 ms, and viem's JavaScript signer took several times as long for
 * the same bytes (both sign by RFC 6979 with a low `s`; docs/decisions/205-where-the-seller-cpu-goes.md).
 */
function recordSigner(privateKey: Hex): LocalAccount {
  const account = privateKeyToAccount(privateKey);
  const key = hexToBytes(privateKey);
  return {
    ...account,
    signMessage: async ({ message }) => signDigest(hexToBytes(hashMessage(message)), key),
  };
}

/** Starts a seller node; resolves once it listens and serves its record. */
export async function startSeller(options: StartSellerOptions): Promise<SellerHandle> {
  const logger = options.logger ?? silentLogger();
  const env = options.env ?? process.env;
  const payments: SellerPayments = options.payments ?? new AdmitAllPayments();
  let seller = options.seller;
  if (seller.providers.length === 0) {
    throw new SvcError('invalid_config', {
      message: 'seller.providers is empty: add a provider (run `svc seller setup --help`)',
    });
  }
  let providers = runtimeProviders(seller, env);
  const account = recordSigner(options.identity.privateKey);
  const node = await createSvcNode({
    identity: options.identity,
    config: options.network,
    role: 'seller',
    logger,
  });
  const record = await keepRecord(() =>
    signMetadata(
      buildMetadata(
        node.peerId,
        seller,
        providers.map((p) => p.load.active),
        payments.capabilities?.(),
        Date.now(),
      ),
      account,
    ),
  );
  const handler = createSellerHandler({
    sellerPeerId: node.peerId,
    providers: () => providers,
    payments,
    onLoadChange: record.onLoadChange,
    logger,
  });
  const { server, announcer } = await serveAndAnnounce(
    node,
    handler,
    {
      uploadLimitBytes: () => seller.uploadLimitBytes,
      receipts: options.receipts ?? receiptIssuer(options.identity.privateKey),
    },
    record,
  );
  const resign = setInterval(
    () => void record.republish(),
    options.resignIntervalMs ?? 10 * 60_000,
  );
  resign.unref();
  logger.debug({ peerId: node.peerId, addresses: node.multiaddrs() }, 'seller started');

  return {
    node,
    metadata: record.current,
    loads: () => providers.map((p) => p.load.active),
    async updateConfig(next) {
      providers = carryLoads(runtimeProviders(next, env), providers);
      seller = next;
      await record.republish();
    },
    republish: record.republish,
    async stop() {
      clearInterval(resign);
      record.stop();
      await announcer.stop();
      await server.stop();
      await node.stop();
    },
  };
}
