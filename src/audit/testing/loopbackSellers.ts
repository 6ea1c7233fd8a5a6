/** A bootstrap node and demo sellers of one model on a loopback network (audit tests over libp2p). */
import type { AuditConfig, SvcConfig } from '../../config/index.js';
import type { SvcNode } from '../../network/index.js';
import {
  loopbackNetworkConfig,
  randomIdentity,
  startLoopbackNode,
} from '../../network/testing/loopback.js';
import { type SellerHandle, startSeller } from '../../seller/index.js';
import { demoSellerOf } from './demoSellers.js';

/** Every answer followed by an audit, spent freely, sent within a fraction of a second. */
export const LOOPBACK_AUDITS: AuditConfig = {
  enabled: true,
  sampleRate: 1,
  dailyBudgetUsd: 10,
  maxShareOfSpend: 100,
  maxDelayMs: 200,
  realAnswers: false,
};

export interface LoopbackSellers {
  network: SvcConfig['network'];
  /** One per price, in order. */
  sellers: SellerHandle[];
  /** Stops the sellers, then the bootstrap node. */
  stop(): Promise<void>;
}

/** Starts a bootstrap node and one demo seller of `model` per input price (USD per million). */
export async function startLoopbackSellers(
  model: string,
  inputUsdPerMillion: readonly number[],
): Promise<LoopbackSellers> {
  const bootstrap: SvcNode = await startLoopbackNode('bootstrap');
  const network = loopbackNetworkConfig({ bootstrap: [bootstrap.multiaddrs()[0]!] });
  const sellers: SellerHandle[] = [];
  const stop = async () => {
    for (const seller of sellers) await seller.stop();
    await bootstrap.stop();
  };
  try {
    for (const price of inputUsdPerMillion) {
      sellers.push(
        await startSeller({
          identity: randomIdentity(),
          seller: demoSellerOf(model, 'demo', price),
          network,
        }),
      );
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { network, sellers, stop };
}
