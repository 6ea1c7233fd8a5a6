/** The component specs of the local network: how each is started and how its health is checked. */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import type { DevLayout, DevPorts } from './layout.js';
import type { ComponentSpec } from './Supervisor.js';
import { httpReady } from './waitFor.js';

/** The svc binary (same relative place from src/ and dist/). */
export const SVC_BIN = new URL('../../bin/svc.js', import.meta.url).pathname;

function svc(dataDir: string, args: string[]): { command: string; args: string[] } {
  return { command: process.execPath, args: [SVC_BIN, '--data-dir', dataDir, ...args] };
}

/** True when a TCP connection to 127.0.0.1:port succeeds. */
export function tcpReady(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

function logContains(path: string, text: string): boolean {
  try {
    return readFileSync(path, 'utf8').includes(text);
  } catch {
    return false;
  }
}

export function chainSpec(
  layout: DevLayout,
  ports: DevPorts,
  deploymentFile: string,
): ComponentSpec {
  const startedAt = Date.now();
  return {
    name: 'chain',
    label: 'chain (anvil + USDC + payments contract)',
    ...svc(layout.chain, [
      'chain',
      'start',
      '--port',
      String(ports.chain),
      '--state',
      layout.chainState,
    ]),
    ports: [ports.chain],
    detail: `http://127.0.0.1:${ports.chain}`,
    ready: async () =>
      existsSync(deploymentFile) &&
      statSync(deploymentFile).mtimeMs >= startedAt - 1000 &&
      tcpReady(ports.chain),
  };
}

export function bootstrapSpec(layout: DevLayout, ports: DevPorts): ComponentSpec {
  return {
    name: 'bootstrap',
    label: 'bootstrap node',
    // Loopback only, like every other process of the dev network (docs/guide/configuration.md "Ports").
    ...svc(layout.bootstrap, [
      'network',
      'bootstrap',
      '--listen',
      `/ip4/127.0.0.1/tcp/${ports.bootstrap}`,
    ]),
    ports: [ports.bootstrap],
    detail: `/ip4/127.0.0.1/tcp/${ports.bootstrap}`,
    ready: () => tcpReady(ports.bootstrap),
  };
}

export function sellerSpec(
  layout: DevLayout,
  index: number,
  label: string,
  logDir: string,
): ComponentSpec {
  const name = `seller-${index}`;
  return {
    name,
    label: `seller ${index}: ${label}`,
    ...svc(layout.seller(index), ['seller', 'start']),
    ready: async () => logContains(`${logDir}/${name}.log`, ') running'),
  };
}

/**
 * The gateway with its buyer in one process (docs/decisions/180-gateway-runs-its-buyer.md): the
 * buyer's local proxy on the buyer port, the gateway on its own.
 */
export function gatewaySpec(layout: DevLayout, ports: DevPorts): ComponentSpec {
  const url = `http://127.0.0.1:${ports.gateway}`;
  const buyerUrl = `http://127.0.0.1:${ports.buyer}`;
  return {
    name: 'gateway',
    label: 'gateway + buyer',
    ...svc(layout.buyer, [
      'gateway',
      'start',
      '--port',
      String(ports.gateway),
      '--buyer-port',
      String(ports.buyer),
    ]),
    ports: [ports.gateway, ports.buyer],
    detail: url,
    // Any gateway answer below 500 (401 without a key) means it is serving.
    ready: async () =>
      (await httpReady(`${buyerUrl}/_svc/status`).catch(() => false)) &&
      httpReady(`${url}/v1/models`).catch(() => false),
  };
}

/** The public snapshot of the local network (rebuilt every 10 s so new sellers show up soon). */
export function indexerSpec(layout: DevLayout, ports: DevPorts): ComponentSpec {
  const port = ports.indexer ?? 8380;
  const url = `http://127.0.0.1:${port}`;
  return {
    name: 'indexer',
    label: 'indexer (public snapshot GET /stats)',
    ...svc(layout.indexer, ['indexer', 'start', '--port', String(port), '--refresh-seconds', '10']),
    ports: [port],
    detail: `${url}/stats`,
    ready: () => httpReady(`${url}/metrics`).catch(() => false),
  };
}

export function facilitatorSpec(layout: DevLayout, ports: DevPorts): ComponentSpec {
  const url = `http://127.0.0.1:${ports.facilitator}`;
  return {
    name: 'facilitator',
    label: 'x402 facilitator (key top-ups)',
    ...svc(layout.facilitator, [
      'x402',
      'facilitator',
      '--port',
      String(ports.facilitator),
      '--rpc-url',
      `http://127.0.0.1:${ports.chain}`,
    ]),
    ports: [ports.facilitator],
    detail: url,
    ready: () => httpReady(`${url}/supported`).catch(() => false),
  };
}
