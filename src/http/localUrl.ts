/** The URL a process on this machine reaches a listening server at. */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * `http://host:port` of `server`, listening on `listenHost`: a wildcard address (`0.0.0.0`, `::`)
 * becomes 127.0.0.1, an IPv6 address is bracketed.
 */
export function localUrl(server: Server, listenHost: string): string {
  const { port } = server.address() as AddressInfo;
  const bare = listenHost.replace(/^\[(.*)\]$/, '$1');
  if (bare === '0.0.0.0' || bare === '::') return `http://127.0.0.1:${port}`;
  return `http://${bare.includes(':') ? `[${bare}]` : bare}:${port}`;
}
