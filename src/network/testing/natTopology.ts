/**
 * Two private networks behind NAT, built from Linux network namespaces, for the hole-punching
 * test (src/network/holePunch.netns.test.ts) and `npm run bench -- network`.
 *
 *   inet   11.77.0.0/16 "internet" (a bridge) with the relay at 11.77.0.1
 *   natA   router: 11.77.1.1 on the internet, 192.168.71.1 on LAN A   hostA  192.168.71.2
 *   natB   router: 11.77.2.1 on the internet, 192.168.72.1 on LAN B   hostB  192.168.72.2
 *
 * Each router masquerades LAN traffic and drops unsolicited packets from the internet, through
 * nf_tables rules that nftMasquerade.py installs over netlink (a fresh machine has neither
 * `iptables` nor `nft`). The internet uses public-looking addresses because libp2p and DCUtR
 * ignore private ones; the namespaces are isolated, so nothing leaves the machine.
 */
import { execFileSync, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

const PEER = new URL('../../node/testing/netnsPeer.ts', import.meta.url).pathname;
const ROUTER = new URL('./nftMasquerade.py', import.meta.url).pathname;

/** Addresses of the topology (see the file comment). */
export const NAT_TOPOLOGY = { relay: '11.77.0.1', routerA: '11.77.1.1', routerB: '11.77.2.1' };

/** What this machine lacks to build the topology, or an empty list. */
export function natTopologyMissing(): string[] {
  const missing: string[] = [];
  if (process.getuid?.() !== 0) missing.push('root (network namespaces and NAT rules need it)');
  const has = (command: string, args: string[]) => {
    try {
      execFileSync(command, args, { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  };
  if (!has('ip', ['netns', 'list'])) missing.push('the `ip` command with netns support (iproute2)');
  if (!has('python3', ['--version'])) {
    missing.push('`python3` (it installs the NAT rules through netlink: testing/nftMasquerade.py)');
  }
  return missing;
}

export interface NatTopology {
  readonly ns: { inet: string; natA: string; hostA: string; natB: string; hostB: string };
  /**
   * Starts src/node/testing/netnsPeer.ts in namespace `ns` with `args` and resolves with its first JSON line.
   * `env` is added to this process's environment.
   */
  startPeer(
    ns: string,
    args: string[],
    timeoutMs: number,
    env?: Record<string, string>,
  ): Promise<Record<string, unknown>>;
  /** Kills every peer and removes every namespace and link (also after a partial setup). */
  stop(): void;
}

const run = (...args: string[]) => execFileSync(args[0]!, args.slice(1), { stdio: 'pipe' });

/** Builds the topology; names start with `prefix` (keep it short: interface names ≤ 15). */
export function buildNatTopology(prefix: string): NatTopology {
  const ns = {
    inet: `${prefix}i`,
    natA: `${prefix}ra`,
    hostA: `${prefix}ha`,
    natB: `${prefix}rb`,
    hostB: `${prefix}hb`,
  };
  const children: ReturnType<typeof spawn>[] = [];
  const stop = () => {
    for (const child of children) child.kill('SIGKILL');
    const attempt = (...args: string[]) => {
      try {
        run(...args);
      } catch {
        // not created, or already gone with its namespace
      }
    };
    for (const name of Object.values(ns)) attempt('ip', 'netns', 'del', name);
    // A veth pair still in the root namespace (setup failed before moving it) goes here.
    for (const link of ['w0', 'l0', 'w1', 'l1']) attempt('ip', 'link', 'del', `${prefix}${link}`);
  };
  try {
    build(prefix, ns);
  } catch (error) {
    stop();
    throw error;
  }
  return {
    ns,
    stop,
    startPeer(name, args, timeoutMs, env = {}) {
      const child = spawn(
        'ip',
        ['netns', 'exec', name, process.execPath, '--import', 'tsx', PEER, ...args],
        { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } },
      );
      children.push(child);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`${args[0]} in ${name} said nothing`)),
          timeoutMs,
        );
        child.once('exit', (code) => {
          clearTimeout(timer);
          reject(new Error(`${args[0]} in ${name} exited (${code}) before answering`));
        });
        createInterface({ input: child.stdout! }).once('line', (line) => {
          clearTimeout(timer);
          resolve(JSON.parse(line) as Record<string, unknown>);
        });
      });
    },
  };
}

function build(prefix: string, ns: NatTopology['ns']): void {
  const inNs = (name: string, ...args: string[]) => run('ip', 'netns', 'exec', name, ...args);
  for (const name of Object.values(ns)) run('ip', 'netns', 'add', name);
  for (const name of Object.values(ns)) inNs(name, 'ip', 'link', 'set', 'lo', 'up');
  inNs(ns.inet, 'ip', 'link', 'add', 'br0', 'type', 'bridge');
  inNs(ns.inet, 'ip', 'addr', 'add', `${NAT_TOPOLOGY.relay}/16`, 'dev', 'br0');
  inNs(ns.inet, 'ip', 'link', 'set', 'br0', 'up');
  const sides = [
    { router: ns.natA, host: ns.hostA, wan: NAT_TOPOLOGY.routerA, lan: '192.168.71' },
    { router: ns.natB, host: ns.hostB, wan: NAT_TOPOLOGY.routerB, lan: '192.168.72' },
  ];
  sides.forEach((side, i) => {
    const wanOut = `${prefix}w${i}`;
    const lanOut = `${prefix}l${i}`;
    run('ip', 'link', 'add', wanOut, 'type', 'veth', 'peer', 'name', `${wanOut}p`);
    run('ip', 'link', 'set', wanOut, 'netns', ns.inet);
    run('ip', 'link', 'set', `${wanOut}p`, 'netns', side.router);
    inNs(ns.inet, 'ip', 'link', 'set', wanOut, 'master', 'br0');
    inNs(ns.inet, 'ip', 'link', 'set', wanOut, 'up');
    inNs(side.router, 'ip', 'addr', 'add', `${side.wan}/16`, 'dev', `${wanOut}p`);
    inNs(side.router, 'ip', 'link', 'set', `${wanOut}p`, 'up');
    run('ip', 'link', 'add', lanOut, 'type', 'veth', 'peer', 'name', `${lanOut}p`);
    run('ip', 'link', 'set', lanOut, 'netns', side.router);
    run('ip', 'link', 'set', `${lanOut}p`, 'netns', side.host);
    inNs(side.router, 'ip', 'addr', 'add', `${side.lan}.1/24`, 'dev', lanOut);
    inNs(side.router, 'ip', 'link', 'set', lanOut, 'up');
    inNs(side.host, 'ip', 'addr', 'add', `${side.lan}.2/24`, 'dev', `${lanOut}p`);
    inNs(side.host, 'ip', 'link', 'set', `${lanOut}p`, 'up');
    inNs(side.host, 'ip', 'route', 'add', 'default', 'via', `${side.lan}.1`);
    inNs(side.router, 'sysctl', '-qw', 'net.ipv4.ip_forward=1');
    inNs(side.router, 'python3', ROUTER, `${wanOut}p`);
  });
}
