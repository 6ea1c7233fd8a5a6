/** viem clients for one network: a public client over a fallback transport (RPC URL + fallbacks). */
import {
  type Account,
  type Chain,
  createPublicClient,
  fallback,
  http,
  type PublicClient,
  type Transport,
} from 'viem';
import { type ChainNetwork, NETWORKS } from './networks.js';
import { TxSender } from './sender.js';

export interface ChainClientsOptions {
  network: ChainNetwork;
  /** RPC URLs tried in order (first is primary). Default: the network's public RPC. */
  rpcUrls?: string[];
  /** Chain id override (a local anvil started with another id). */
  chainId?: number;
}

export interface ChainClients {
  network: ChainNetwork;
  chain: Chain;
  rpcUrls: string[];
  transport: Transport;
  publicClient: PublicClient;
  /** The one TxSender of an account (one nonce counter per account). */
  senderFor(account: Account): TxSender;
}

/** Creates clients; requests retry with backoff and move to the next URL when one fails. */
export function createChainClients(options: ChainClientsOptions): ChainClients {
  const info = NETWORKS[options.network];
  const chain: Chain =
    options.chainId !== undefined && options.chainId !== info.chain.id
      ? { ...info.chain, id: options.chainId }
      : info.chain;
  const rpcUrls = options.rpcUrls?.length ? options.rpcUrls : [info.defaultRpcUrl];
  const transports = rpcUrls.map((url) =>
    http(url, { retryCount: 2, retryDelay: 150, timeout: 15_000 }),
  );
  const transport = transports.length === 1 ? transports[0]! : fallback(transports);
  const publicClient = createPublicClient({
    chain,
    transport,
    pollingInterval: 250,
  }) as PublicClient;
  const senders = new Map<string, TxSender>();
  const clients: ChainClients = {
    network: options.network,
    chain,
    rpcUrls,
    transport,
    publicClient,
    senderFor(account) {
      const key = account.address.toLowerCase();
      let sender = senders.get(key);
      if (!sender) {
        sender = new TxSender(clients, account);
        senders.set(key, sender);
      }
      return sender;
    },
  };
  return clients;
}
