/**
 * `npm run bench -- chain`: the gas of every SvcPayments operation, measured from receipts on a
 * real anvil chain with this version's contracts, priced on Base at a stated gas price, and the
 * chain cost per paid request when channels settle at the default thresholds
 * (docs/decisions/177-payments-invariants-and-gas.md).
 *
 * Figures are L2 execution gas only: Base also charges an L1 data fee per transaction that
 * depends on Ethereum's blob price at the time, so the calldata size is printed beside each row.
 * The price is stated, never fetched: SVC_BENCH_GAS_GWEI (default 0.01) and SVC_BENCH_ETH_USD
 * (default DEFAULT_ETH_USD).
 */
import { type Hex, keccak256, parseGwei, size, stringToHex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import {
  DEFAULT_ETH_USD,
  DEFAULT_FAUCET_ETH,
  type LocalChain,
  signDepositAuthorization,
  startLocalChain,
  submitDepositAuthorization,
  weiToMicroUsd,
} from '../src/chain/index.js';
import { defaultConfig } from '../src/config/index.js';
import { formatUsd, parseUsd } from '../src/money/index.js';
import {
  channelIdOf,
  type PaymentsDomain,
  signReserve,
  signVoucher,
} from '../src/payments/index.js';

const GAS_GWEI = process.env.SVC_BENCH_GAS_GWEI ?? '0.01';
const ETH_USD = process.env.SVC_BENCH_ETH_USD ?? DEFAULT_ETH_USD;

interface Row {
  operation: string;
  /** Who sends the transaction (and pays its gas). */
  payer: string;
  gas: bigint;
  calldataBytes: number;
}

/** Gas and calldata size of the transaction anvil mined last (automine: one per block). */
async function lastTransaction(chain: LocalChain): Promise<{ gas: bigint; calldataBytes: number }> {
  const client = chain.clients.publicClient;
  const block = await client.getBlock({ blockTag: 'latest' });
  const hash = block.transactions.at(-1);
  if (!hash) throw new Error('no transaction in the latest block');
  const [receipt, tx] = await Promise.all([
    client.getTransactionReceipt({ hash }),
    client.getTransaction({ hash }),
  ]);
  if (receipt.status !== 'success') throw new Error(`${hash} reverted`);
  return { gas: receipt.gasUsed, calldataBytes: size(tx.input) };
}

/** The receipt of the SvcPayments deployment (startLocalChain deploys it). */
async function deploymentGas(chain: LocalChain): Promise<{ gas: bigint; calldataBytes: number }> {
  const client = chain.clients.publicClient;
  const latest = await client.getBlockNumber();
  for (let number = 0n; number <= latest; number++) {
    const block = await client.getBlock({ blockNumber: number });
    for (const hash of block.transactions) {
      const receipt = await client.getTransactionReceipt({ hash });
      if (receipt.contractAddress?.toLowerCase() !== chain.deployment.paymentsAddress.toLowerCase())
        continue;
      const tx = await client.getTransaction({ hash });
      return { gas: receipt.gasUsed, calldataBytes: size(tx.input) };
    }
  }
  throw new Error('the SvcPayments deployment was not found');
}

/** Runs each operation once, in the order a channel lives, and reads its gas. */
async function measureOperations(chain: LocalChain): Promise<Row[]> {
  const rows: Row[] = [
    { operation: 'deploy SvcPayments', payer: 'operator', ...(await deploymentGas(chain)) },
  ];
  const record = async (operation: string, payer: string, send: () => Promise<unknown>) => {
    await send();
    rows.push({ operation, payer, ...(await lastTransaction(chain)) });
  };
  const contract = chain.contract;
  const domain: PaymentsDomain = {
    chainId: chain.deployment.chainId,
    paymentsAddress: chain.deployment.paymentsAddress,
  };
  const buyer = privateKeyToAccount(generatePrivateKey());
  const seller = privateKeyToAccount(generatePrivateKey());
  const relayer = privateKeyToAccount(generatePrivateKey());
  await chain.faucet(buyer.address, { usdcMicro: 10_000_000n, ethWei: DEFAULT_FAUCET_ETH });
  await chain.faucet(seller.address, { ethWei: DEFAULT_FAUCET_ETH });
  await chain.faucet(relayer.address, { ethWei: DEFAULT_FAUCET_ETH });

  // deposit() is approve + deposit; the table shows deposit alone (approve is the token's).
  await record('deposit (after approve)', 'buyer', () => contract.deposit(buyer, 3_000_000n));
  const now = BigInt(await contract.chainTime());
  const auth = await signDepositAuthorization(buyer, contract, {
    valueMicro: 3_000_000n,
    validAfter: now - 1n,
    validBefore: now + 3600n,
  });
  await record('depositWithAuthorization (gasless sweep)', 'buyer or relayer', () =>
    submitDepositAuthorization(contract, relayer, auth),
  );

  const open = async (label: string, lock: bigint) => {
    const salt = keccak256(stringToHex(label));
    const channelId = channelIdOf(buyer.address, seller.address, salt);
    const deadline = BigInt(await contract.chainTime()) + 3600n;
    const reserve = { channelId, buyer: buyer.address, seller: seller.address, maxAmount: lock };
    const signature = await signReserve(buyer, domain, { ...reserve, deadline });
    return { channelId, salt, deadline, signature };
  };
  const voucher = async (channelId: Hex, cumulativeAmount: bigint) =>
    signVoucher(buyer, domain, { channelId, cumulativeAmount });

  const first = await open('bench channel 1', 1_000_000n);
  await record('openChannel', 'seller', () =>
    contract.openChannel(seller, {
      buyer: buyer.address,
      salt: first.salt,
      maxAmount: 1_000_000n,
      deadline: first.deadline,
      signature: first.signature,
    }),
  );
  const raised = await signReserve(buyer, domain, {
    channelId: first.channelId,
    buyer: buyer.address,
    seller: seller.address,
    maxAmount: 2_000_000n,
    deadline: first.deadline,
  });
  await record('topUp', 'seller', () =>
    contract.topUp(seller, {
      channelId: first.channelId,
      maxAmount: 2_000_000n,
      deadline: first.deadline,
      signature: raised,
    }),
  );
  await record("settle (the seller's first USDC)", 'seller', async () =>
    contract.settle(seller, first.channelId, 500_000n, await voucher(first.channelId, 500_000n)),
  );
  await record('settle (later)', 'seller', async () =>
    contract.settle(
      seller,
      first.channelId,
      1_000_000n,
      await voucher(first.channelId, 1_000_000n),
    ),
  );
  await record('close with a final voucher, after settlements', 'seller', async () =>
    contract.close(seller, first.channelId, 1_500_000n, await voucher(first.channelId, 1_500_000n)),
  );

  const openOnly = async (label: string) => {
    const channel = await open(label, 500_000n);
    await contract.openChannel(seller, {
      buyer: buyer.address,
      salt: channel.salt,
      maxAmount: 500_000n,
      deadline: channel.deadline,
      signature: channel.signature,
    });
    return channel.channelId;
  };
  const second = await openOnly('bench channel 2');
  await record('settle (first on a channel)', 'seller', async () =>
    contract.settle(seller, second, 100_000n, await voucher(second, 100_000n)),
  );
  await record('close without a voucher', 'seller', () => contract.close(seller, second, 0n, '0x'));
  const third = await openOnly('bench channel 3');
  await record('close with a final voucher, nothing settled before', 'seller', async () =>
    contract.close(seller, third, 200_000n, await voucher(third, 200_000n)),
  );

  const fourth = await openOnly('bench channel 4');
  await record('requestClose', 'buyer', () => contract.requestClose(buyer, fourth));
  await chain.increaseTime(chain.deployment.gracePeriodSeconds);
  await record('reclaim (after the grace period)', 'buyer', () => contract.reclaim(buyer, fourth));
  await record('withdraw', 'buyer', () => contract.withdraw(buyer, 1_000_000n));
  return rows;
}

/**
 * Transactions of one channel that carries `carriedMicro` of paid requests at the default
 * thresholds, besides its one open and one close: topped up by `lock` each time the lock is used
 * up (the buyer raises it by channelLockUsd), settled each time `threshold` is unsettled.
 */
function channelLife(carriedMicro: bigint, lockMicro: bigint, thresholdMicro: bigint) {
  const ceil = (a: bigint, b: bigint) => (a + b - 1n) / b;
  return {
    topUps: ceil(carriedMicro, lockMicro) - 1n,
    settles: ceil(carriedMicro, thresholdMicro) - 1n,
  };
}

export default async function bench(): Promise<Record<string, unknown>> {
  const chain = await startLocalChain();
  try {
    const rows = await measureOperations(chain);
    const gasPriceWei = parseGwei(GAS_GWEI);
    const usdOf = (gas: bigint) => weiToMicroUsd(gas * gasPriceWei, ETH_USD);
    console.log(
      `SvcPayments gas on anvil; USD at ${GAS_GWEI} gwei (Base L2 execution) and ${ETH_USD} USD/ETH, L1 data fee not included\n`,
    );
    console.log('| operation | paid by | gas | calldata bytes | USD on Base |');
    console.log('| --- | --- | ---: | ---: | ---: |');
    for (const row of rows) {
      console.log(
        `| ${row.operation} | ${row.payer} | ${row.gas} | ${row.calldataBytes} | ${formatUsd(usdOf(row.gas))} |`,
      );
    }

    const defaults = defaultConfig().chain.payments;
    const lock = parseUsd(defaults.channelLockUsd);
    const threshold = parseUsd(defaults.settleThresholdUsd);
    const gasOf = (operation: string) => rows.find((row) => row.operation === operation)!.gas;
    const perChannel = (carried: bigint) => {
      const life = channelLife(carried, lock, threshold);
      const settles =
        life.settles === 0n
          ? 0n
          : gasOf('settle (first on a channel)') + (life.settles - 1n) * gasOf('settle (later)');
      const close =
        life.settles === 0n
          ? gasOf('close with a final voucher, nothing settled before')
          : gasOf('close with a final voucher, after settlements');
      return gasOf('openChannel') + life.topUps * gasOf('topUp') + settles + close;
    };
    console.log(
      `\nCost per paid request (channel lock ${defaults.channelLockUsd} USD, settle at ${defaults.settleThresholdUsd} USD unsettled, closed with the final voucher):\n`,
    );
    console.log('| channel carries | requests of | requests | chain gas | USD per request |');
    console.log('| ---: | ---: | ---: | ---: | ---: |');
    const perRequest: Array<Record<string, string>> = [];
    for (const carriedUsd of ['0.01', '1.00', '10.00']) {
      for (const requestUsd of ['0.001', '0.01']) {
        const carried = parseUsd(carriedUsd);
        const request = parseUsd(requestUsd);
        if (request > carried) continue;
        const requests = carried / request;
        const gas = perChannel(carried);
        const usd = usdOf(gas);
        // Rounded up to the micro-USD: a cost is never understated.
        const each = (usd + requests - 1n) / requests;
        console.log(
          `| ${carriedUsd} USD | ${requestUsd} USD | ${requests} | ${gas} | ${formatUsd(each)} |`,
        );
        perRequest.push({
          carriedUsd,
          requestUsd,
          requests: String(requests),
          gas: String(gas),
          usdPerRequest: formatUsd(each),
        });
      }
    }
    return {
      gasPriceGwei: GAS_GWEI,
      ethUsd: ETH_USD,
      operations: rows.map((row) => ({ ...row, usd: formatUsd(usdOf(row.gas)) })),
      perRequest,
    };
  } finally {
    await chain.stop();
  }
}
