/** The contract check buyers and sellers run at start, against code placed on a real anvil. */
import { type Address, bytesToHex, type Hex, hexToBytes } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createChainClients,
  type LocalChain,
  PaymentsContract,
  startLocalChain,
} from '../chain/index.js';
import { SvcPaymentsImmutableRanges } from '../contracts/index.js';
import { isSvcError } from '../errors/index.js';
import { assertPaymentsContract, checkPaymentsContract } from './index.js';

let chain: LocalChain;
let code: Uint8Array;

beforeAll(async () => {
  chain = await startLocalChain({ gracePeriodSeconds: 900 });
  const deployed = await chain.clients.publicClient.getCode({
    address: chain.deployment.paymentsAddress,
  });
  code = hexToBytes(deployed as Hex);
});

afterAll(async () => {
  await chain?.stop();
});

/** Places `bytes` as the code of a fresh address and returns a binding expecting `grace`. */
async function placed(bytes: Uint8Array, label: number, grace?: number): Promise<PaymentsContract> {
  const address = `0x${label.toString(16).padStart(40, '0')}` as Address;
  await chain.clients.publicClient.request({
    method: 'anvil_setCode' as 'eth_chainId',
    params: [address, bytesToHex(bytes)] as unknown as undefined,
  });
  return new PaymentsContract(chain.clients, address, chain.deployment.usdcAddress, grace);
}

async function mismatch(contract: PaymentsContract): Promise<string> {
  try {
    await assertPaymentsContract(contract);
  } catch (error) {
    if (isSvcError(error) && error.code === 'payments_contract_mismatch') return error.message;
    throw error;
  }
  throw new Error('the contract was accepted');
}

describe('checkPaymentsContract', () => {
  it("accepts this version's contract, with the grace period the deployment recorded", async () => {
    const check = await checkPaymentsContract(chain.contract);
    expect(check.differences).toEqual([]);
    expect(check.gracePeriodSeconds).toEqual({ expected: 900, actual: 900 });
    expect(check.code.matches).toBe(true);
    await expect(assertPaymentsContract(chain.contract)).resolves.toBeUndefined();
  });

  it('refuses code whose one immutable holds two values (built by another constructor)', async () => {
    const forged = code.slice();
    const ranges = SvcPaymentsImmutableRanges.filter(
      (range) => range.id === SvcPaymentsImmutableRanges[0].id,
    );
    expect(ranges.length).toBeGreaterThan(1);
    // The last occurrence of the USDC immutable now names another token.
    forged.fill(0xee, ranges.at(-1)!.start + 12, ranges.at(-1)!.start + 32);
    const message = await mismatch(await placed(forged, 0xa1, 900));
    expect(message).toContain('its code holds two values for one immutable');
  });

  it('refuses code one byte away from the artifact, naming the byte', async () => {
    const changed = code.slice();
    const at = code.length - 60;
    changed[at] = changed[at]! ^ 0xff;
    const message = await mismatch(await placed(changed, 0xa2, 900));
    expect(message).toContain(`its code differs from this version's SvcPayments at byte ${at}`);
  });

  it('refuses the right code when the node expects another grace period or another chain', async () => {
    const copy = await placed(code, 0xa3, 3600);
    const message = await mismatch(copy);
    expect(message).toContain('its grace period is 900 s, not 3600 s');
    // The copy's own address is in its domain, so only the grace period differs.
    expect(message).not.toContain('EIP-712');
    // Unknown grace period (a local contract the deployment file does not name): not checked.
    expect((await checkPaymentsContract(await placed(code, 0xa4))).differences).toEqual([]);

    const otherChain = createChainClients({
      network: 'local',
      rpcUrls: [chain.rpcUrl],
      chainId: 8453,
    });
    const wrongChain = new PaymentsContract(
      otherChain,
      chain.deployment.paymentsAddress,
      chain.deployment.usdcAddress,
      900,
    );
    const refused = await mismatch(wrongChain);
    expect(refused).toContain(`the RPC is on chain ${chain.deployment.chainId}, not 8453`);
    expect(refused).toContain('its EIP-712 domain is not SvcPayments v1 on chain 8453');
  });

  it('throws what the RPC throws when the chain does not answer (not a mismatch)', async () => {
    const dead = createChainClients({ network: 'local', rpcUrls: ['http://127.0.0.1:9'] });
    const contract = new PaymentsContract(
      dead,
      chain.deployment.paymentsAddress,
      chain.deployment.usdcAddress,
    );
    const failure = await assertPaymentsContract(contract).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(Error);
    expect(isSvcError(failure)).toBe(false);
  });
});
