/**
 * `svc up`: the whole network on one machine — chain, bootstrap, sellers, facilitator, indexer,
 * and the gateway with its buyer — each a process of its own, started in order with a health
 * check before the next.
 */
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { createChainClients, deploymentPath, readDeployment, runFaucet } from '../chain/index.js';
import { IdentityStore } from '../identity/index.js';
import { formatUsd, parseUsd } from '../money/index.js';
import { libp2pPeerIdFromIdentity } from '../network/index.js';
import type { RunningService } from '../node/index.js';
import { NEW_SELLER_DAYS, NEW_SELLER_SCORE_CAP } from '../payments/index.js';
import { isAlive } from './ChildProcess.js';
import {
  bootstrapSpec,
  chainSpec,
  facilitatorSpec,
  gatewaySpec,
  indexerSpec,
  sellerSpec,
} from './components.js';
import {
  DEV_MIN_TRUST_SCORE,
  writeBootstrapConfig,
  writeBuyerConfig,
  writeIndexerConfig,
  writePayerConfig,
  writeSellerConfig,
} from './configs.js';
import { type DevKey, ensureDevKey } from './devKey.js';
import { type DevLayout, type DevPorts, devLayout } from './layout.js';
import { smokeTest, waitForSellers } from './readiness.js';
import { ComponentStartError, type StartStep, Supervisor } from './Supervisor.js';
import { type DevSeller, demoSeller, realSellers, substituteSeller } from './sellers.js';
import { clearDevState, type DevState, readDevState, writeDevState } from './state.js';

export interface UpOptions {
  dataDir: string;
  sellers: number;
  fresh: boolean;
  detach: boolean;
  ports: DevPorts;
  env: NodeJS.ProcessEnv;
  print: (line: string) => void;
  /** More sellers beside the demo ones (tests: sellers of one API format over a stand-in upstream). */
  extraSellers?: DevSeller[];
  /** Add a substitute seller, and have the buyer audit every answer (docs/guide/trust.md). */
  substitute?: boolean;
}

/** Audits of every answer, budget enough to watch the substitute get caught in a few requests. */
const WATCH_AUDITS = { sampleRate: 1, dailyBudgetUsd: 1, maxShareOfSpend: 100, maxDelayMs: 2_000 };

/** A running local network (attached mode); `stop()` stops every component in reverse order. */
export interface RunningDevnet extends RunningService {
  state: DevState;
  devKey: DevKey;
}

const FUND_BUYER_USDC = parseUsd('100');
/** The x402 payer gets USDC only: a top-up is a signature, the facilitator pays the gas. */
const FUND_PAYER_USDC = parseUsd('20');
const FUND_ETH_WEI = 10n ** 19n;

/** Refuses to start over a network that is still running. */
function assertNotRunning(layout: DevLayout): void {
  const previous = readDevState(layout.state);
  if (!previous) return;
  const alive = previous.components.filter((component) => isAlive(component.pid));
  if (previous.upPid && isAlive(previous.upPid)) {
    throw new ComponentStartError(
      `a local network is already running (svc up, pid ${previous.upPid}); stop it with Ctrl-C there or \`svc down\``,
    );
  }
  if (alive.length > 0) {
    throw new ComponentStartError(
      `a local network is already running (${alive.map((c) => `${c.name} pid ${c.pid}`).join(', ')}); run \`svc down\` first`,
    );
  }
  clearDevState(layout.state);
}

/** Starts the local network; resolves once everything is ready. */
export async function startDevnet(options: UpOptions): Promise<RunningDevnet> {
  const started = Date.now();
  const layout = devLayout(options.dataDir);
  assertNotRunning(layout);
  const firstRun = prepareDataDir(options, layout);
  const plan = planNetwork(options, layout);
  const supervisor = new Supervisor({ logDir: layout.logs, print: options.print });
  await supervisor.startAll(startSteps(options, layout, plan, firstRun));
  const devKey = await readyOrStop(supervisor, layout, plan, options.print);
  const state = devState(options, supervisor, plan);
  writeDevState(layout.state, state);
  await smokeTest(plan.gatewayUrl, devKey, options.print);
  printSummary(options, layout, state, devKey, {
    sellerCount: plan.sellers.length,
    seconds: (Date.now() - started) / 1000,
  });
  if (options.detach) for (const { process } of supervisor.running) process.release();
  return {
    state,
    devKey,
    stop: async () => {
      options.print('stopping the local network ...');
      await supervisor.stopAll();
      clearDevState(layout.state);
      options.print('stopped; every component has exited');
    },
  };
}

/** What the components are told about each other. */
interface NetworkPlan {
  bootstrapAddr: string;
  buyerAddress: `0x${string}`;
  rpcUrl: string;
  buyerUrl: string;
  gatewayUrl: string;
  sellers: DevSeller[];
}

/** Makes the data folders (emptied first with `fresh`); true when the chain was never deployed. */
function prepareDataDir(options: UpOptions, layout: DevLayout): boolean {
  if (options.fresh) rmSync(layout.root, { recursive: true, force: true });
  for (const dir of [
    layout.root,
    layout.logs,
    layout.chain,
    layout.bootstrap,
    layout.buyer,
    layout.payer,
    layout.facilitator,
    layout.indexer,
  ]) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  }
  const firstRun = !existsSync(deploymentPath(layout.chain));
  options.print(
    `svc local network in ${layout.root}${firstRun ? '' : ' (resuming: same keys, same balances)'}`,
  );
  return firstRun;
}

/** Loads (or creates) the bootstrap and buyer identities and writes the bootstrap's config. */
function planNetwork(options: UpOptions, layout: DevLayout): NetworkPlan {
  const bootstrapIdentity = new IdentityStore(layout.bootstrap).loadDefault();
  const bootstrapAddr = `/ip4/127.0.0.1/tcp/${options.ports.bootstrap}/p2p/${libp2pPeerIdFromIdentity(bootstrapIdentity.privateKey).toString()}`;
  writeBootstrapConfig(layout.bootstrap, options.ports.bootstrap);
  const buyerAddress = new IdentityStore(layout.buyer).loadDefault().record.address;
  const sellers = [
    ...Array.from({ length: options.sellers }, (_, i) => demoSeller(i)),
    ...realSellers(options.env),
    ...(options.extraSellers ?? []),
    ...(options.substitute ? [substituteSeller()] : []),
  ];
  return {
    bootstrapAddr,
    buyerAddress,
    rpcUrl: `http://127.0.0.1:${options.ports.chain}`,
    buyerUrl: `http://127.0.0.1:${options.ports.buyer}`,
    gatewayUrl: `http://127.0.0.1:${options.ports.gateway}`,
    sellers,
  };
}

/** The start order: independent components side by side, each step after the one before. */
function startSteps(
  options: UpOptions,
  layout: DevLayout,
  plan: NetworkPlan,
  firstRun: boolean,
): StartStep[] {
  const configured = configureOnce(options, layout, plan, firstRun);
  return [
    [
      chainSpec(layout, options.ports, deploymentPath(layout.chain)),
      bootstrapSpec(layout, options.ports),
    ],
    plan.sellers.map((seller, index) => async () => {
      await configured();
      return sellerSpec(layout, index + 1, seller.summary, layout.logs);
    }),
    [
      facilitatorSpec(layout, options.ports),
      async () => {
        await configured();
        return indexerSpec(layout, options.ports);
      },
    ],
    gatewaySpec(layout, options.ports),
  ];
}

/**
 * Sellers and buyer need the chain's addresses in their configs, so they are written (and
 * wallets funded) once the chain is up, by whichever component asks first.
 */
function configureOnce(
  options: UpOptions,
  layout: DevLayout,
  plan: NetworkPlan,
  firstRun: boolean,
): () => Promise<void> {
  const { bootstrapAddr, rpcUrl, sellers } = plan;
  let configuring: Promise<void> | undefined;
  const configure = async () => {
    const deployment = readDeployment(layout.chain)!;
    if (firstRun) await fundWallets(rpcUrl, layout, sellers.length, plan.buyerAddress);
    for (const [index, seller] of sellers.entries()) {
      writeSellerConfig(layout.seller(index + 1), seller, bootstrapAddr, rpcUrl, deployment);
    }
    writeBuyerConfig(layout.buyer, {
      ports: options.ports,
      bootstrap: bootstrapAddr,
      rpcUrl,
      deployment,
      audit: options.substitute ? WATCH_AUDITS : undefined,
    });
    writePayerConfig(layout.payer, rpcUrl, deployment);
    writeIndexerConfig(layout.indexer, bootstrapAddr, rpcUrl, deployment);
  };
  return () => {
    configuring ??= configure();
    return configuring;
  };
}

/** Waits for discovery and the dev key; on failure stops every component started. */
async function readyOrStop(
  supervisor: Supervisor,
  layout: DevLayout,
  plan: NetworkPlan,
  print: (line: string) => void,
): Promise<DevKey> {
  try {
    await waitForSellers(plan.buyerUrl, plan.sellers.length, print);
    return await ensureDevKey(layout.buyer, layout.devKey);
  } catch (error) {
    await supervisor.stopAll();
    throw error;
  }
}

function devState(options: UpOptions, supervisor: Supervisor, plan: NetworkPlan): DevState {
  return {
    ...(options.detach ? {} : { upPid: process.pid }),
    startedAt: new Date().toISOString(),
    detached: options.detach,
    buyerUrl: plan.buyerUrl,
    gatewayUrl: plan.gatewayUrl,
    chainRpcUrl: plan.rpcUrl,
    components: supervisor.running.map(({ spec, process, step }) => ({
      name: spec.name,
      step,
      label: spec.label,
      pid: process.pid!,
      logFile: process.logFile,
      ...(spec.detail ? { url: spec.detail } : {}),
    })),
  };
}

async function fundWallets(
  rpcUrl: string,
  layout: DevLayout,
  sellerCount: number,
  buyer: `0x${string}`,
): Promise<void> {
  const deployment = readDeployment(layout.chain)!;
  const clients = createChainClients({
    network: 'local',
    rpcUrls: [rpcUrl],
    chainId: deployment.chainId,
  });
  await runFaucet(clients, deployment, buyer, { usdcMicro: FUND_BUYER_USDC, ethWei: FUND_ETH_WEI });
  const payer = new IdentityStore(layout.payer).loadDefault().record.address;
  await runFaucet(clients, deployment, payer, { usdcMicro: FUND_PAYER_USDC });
  for (let index = 1; index <= sellerCount; index++) {
    const seller = new IdentityStore(layout.seller(index)).loadDefault().record.address;
    await runFaucet(clients, deployment, seller, { ethWei: FUND_ETH_WEI });
  }
}

function printSummary(
  options: UpOptions,
  layout: DevLayout,
  state: DevState,
  key: DevKey,
  { sellerCount, seconds }: { sellerCount: number; seconds: number },
): void {
  const { buyerUrl, gatewayUrl } = state;
  const p = options.print;
  const weekly = formatUsd(parseUsd(key.weeklyLimitUsd));
  p('');
  p(`svc local network ready in ${seconds.toFixed(1)} s (${sellerCount} sellers)`);
  p(
    `  buyer     ${buyerUrl}      OpenAI base ${buyerUrl}/v1, Anthropic base ${buyerUrl} (no key needed)`,
  );
  p(`  gateway   ${gatewayUrl}      OpenAI base ${gatewayUrl}/v1, Anthropic base ${gatewayUrl}`);
  p(
    `  indexer   http://127.0.0.1:${options.ports.indexer ?? 8380}/stats  public snapshot: sellers and their on-chain record`,
  );
  p(`  key       ${key.secret}  (${key.id}, Default workspace, weekly budget ${weekly} USD)`);
  p(`  chain     ${state.chainRpcUrl}  (local anvil; the buyer wallet was funded with test USDC)`);
  p(
    `  routing   dev network: buyer.routingPreferences.minTrustScore is ${DEV_MIN_TRUST_SCORE} in ${layout.buyer}/config.json, because new local sellers have no on-chain history yet and score at most ${NEW_SELLER_SCORE_CAP} in their first ${NEW_SELLER_DAYS} days on chain (the default, 60, would exclude them all)`,
  );
  p('');
  p('Try it:');
  p(
    `  curl ${gatewayUrl}/v1/chat/completions -H "authorization: Bearer ${key.secret}" -H "content-type: application/json" -d '{"model":"svc-demo-fast","messages":[{"role":"user","content":"hi"}]}'`,
  );
  p(
    `  curl ${gatewayUrl}/v1/responses -H "authorization: Bearer ${key.secret}" -H "content-type: application/json" -d '{"model":"svc-demo-smart","input":"hi"}'`,
  );
  p(
    `  curl ${gatewayUrl}/v1/messages -H "authorization: Bearer ${key.secret}" -H "content-type: application/json" -d '{"model":"svc-demo-reasoning","max_tokens":100,"messages":[{"role":"user","content":"hi"}]}'`,
  );
  p(`  curl ${buyerUrl}/v1/models          # the network-wide catalog`);
  p(`  curl ${gatewayUrl}/v1/key -H "authorization: Bearer ${key.secret}"   # spend and limits`);
  p('');
  const svc = svcInvocation(options.env);
  p('Coding tools against the buyer (each must be installed; docs/guide/buyer.md "Coding tools"):');
  p(`  ${svc} --data-dir ${layout.buyer} claude      # Claude Code`);
  p(`  ${svc} --data-dir ${layout.buyer} codex       # Codex`);
  p(`  ${svc} --data-dir ${layout.buyer} opencode    # opencode`);
  p('and through the gateway with the key above:');
  p(
    `  SVC_API_KEY=${key.secret} ${svc} claude --svc-gateway ${gatewayUrl}   # same for codex, opencode`,
  );
  p('');
  p(
    `Top up a key of its own with x402 (paid from a test wallet holding ${formatUsd(FUND_PAYER_USDC)} USDC, settled on the local chain):`,
  );
  p(
    `  ${svc} --data-dir ${layout.buyer} gateway key create --label mine --new-identity --allow-topup`,
  );
  p(
    `  ${svc} --data-dir ${layout.payer} x402 pay-topup 5 --key <svc_... of that key> --gateway-url ${gatewayUrl}`,
  );
  p('');
  p(
    `Logs in ${layout.logs}. ${options.detach ? `Stop with \`${svc} down\`.` : 'Press Ctrl-C to stop everything.'}`,
  );
}

/**
 * How the user runs `svc` in the lines we print: through npm when `svc up` itself was started by an
 * npm script from a checkout (`npm start`: no `svc` on PATH there), else the installed command.
 */
function svcInvocation(env: NodeJS.ProcessEnv): string {
  return env.npm_lifecycle_event ? 'npm run svc --' : 'svc';
}
