/** Port checks for `svc up`: is a port free, and if not, which process holds it. */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { createServer } from 'node:net';

/** True when nothing listens on `host:port`. */
export function isPortFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** Ports this process handed out already: never handed out twice. */
const handedOut = new Set<number>();

/** The lowest port the kernel picks for outgoing connections (Linux; 32768 elsewhere). */
function ephemeralLow(): number {
  try {
    const low = Number.parseInt(
      readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]!,
      10,
    );
    return Number.isInteger(low) && low > 11_000 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

/**
 * A port that is free right now on loopback, for tests that start servers on chosen ports. It is
 * drawn below the kernel's ephemeral range, so an outgoing connection made meanwhile (a node
 * dialling another) cannot take it before the server binds, and never twice in one process.
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const high = ephemeralLow();
  for (let attempt = 0; attempt < 500; attempt++) {
    const port = 10_000 + Math.floor(Math.random() * (high - 10_000));
    if (handedOut.has(port) || !(await isPortFree(port, host))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error(`no free port found on ${host} below ${high}`);
}

/** The process listening on a TCP port (Linux /proc), e.g. "node (pid 1234)"; undefined if unknown. */
export function describePortHolder(port: number): string | undefined {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10) continue;
      const localPort = Number.parseInt(fields[1]!.split(':')[1] ?? '', 16);
      // State 0A is LISTEN.
      if (localPort === port && fields[3] === '0A') inodes.add(fields[9]!);
    }
  }
  if (inodes.size === 0) return undefined;
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return undefined;
  }
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
        const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
        if (inode && inodes.has(inode)) {
          const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
            .split('\0')
            .filter(Boolean)
            .join(' ');
          return `${command.slice(0, 120) || 'unknown command'} (pid ${pid})`;
        }
      } catch {}
    }
  }
  return undefined;
}
