/** Where `svc up` keeps each component's state, and which ports it uses. */
import { join } from 'node:path';

export interface DevPorts {
  chain: number;
  bootstrap: number;
  buyer: number;
  gateway: number;
  /** Local x402 facilitator (settles key top-ups on the local chain). */
  facilitator: number;
  /** Public snapshot (`svc indexer start`); default 8380. */
  indexer?: number;
}

/** Defaults: the product's well-known ports; the chain and bootstrap next to them. */
export const DEFAULT_DEV_PORTS: DevPorts = {
  chain: 8545,
  bootstrap: 8378,
  buyer: 8377,
  gateway: 8379,
  facilitator: 8402,
  indexer: 8380,
};

/** Paths under `<data-dir>/dev/`. Buyer and gateway share one data dir (the control secret). */
export function devLayout(dataDir: string) {
  const root = join(dataDir, 'dev');
  return {
    root,
    logs: join(root, 'logs'),
    state: join(root, 'state.json'),
    devKey: join(root, 'gateway-key.json'),
    chain: join(root, 'chain'),
    chainState: join(root, 'chain', 'anvil-state.json'),
    bootstrap: join(root, 'bootstrap'),
    facilitator: join(root, 'facilitator'),
    buyer: join(root, 'buyer'),
    /** A wallet with test USDC only, for trying x402 key top-ups (`--data-dir` of pay-topup). */
    payer: join(root, 'payer'),
    indexer: join(root, 'indexer'),
    seller: (index: number) => join(root, `seller-${index}`),
  };
}

export type DevLayout = ReturnType<typeof devLayout>;
