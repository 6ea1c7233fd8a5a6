/** Waiting for a running buyer to discover sellers, as the network tests do. */
import { waitFor } from '../../testing/index.js';

/**
 * Asks the buyer at `buyer.url` to refresh its peers (`POST /_svc/peers/refresh`) until `seen`
 * holds, and resolves with what `seen` returned; throws after `timeoutMs` naming `what`.
 */
export function waitForDiscovery<T>(
  buyer: { url: string },
  seen: () => T | undefined | null | false,
  what: string,
  timeoutMs = 45_000,
): Promise<T> {
  return waitFor(
    async () => {
      await fetch(`${buyer.url}/_svc/peers/refresh`, { method: 'POST' });
      return seen();
    },
    timeoutMs,
    what,
  );
}
