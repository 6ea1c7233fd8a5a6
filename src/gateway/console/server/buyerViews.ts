/**
 * Pages built from the buyer's control plane (the gateway reaches the buyer over HTTP only):
 * the network (sellers, offers, prices, reputation) and wallets (deposit addresses, channels,
 * top-up credits).
 */
import { SvcError } from '../../../errors/index.js';
import { readStreamBody } from '../../../http/index.js';
import { formatUsd } from '../../../money/index.js';
import type { ConsoleDeps } from './deps.js';
import type { StaffViewer } from './scope.js';

/** What the buyer said, or why it could not be asked (the page shows the reason). */
type BuyerAnswer = { ok: true; body: Record<string, unknown> } | { ok: false; reason: string };

const MAX_BUYER_BYTES = 4 * 1024 * 1024;

async function askBuyer(deps: ConsoleDeps, path: string): Promise<BuyerAnswer> {
  try {
    const response = await deps.buyer.request({
      method: 'GET',
      path,
      headersTimeout: 5000,
      bodyTimeout: 5000,
    });
    const declared = Number(response.headers['content-length'] ?? 0);
    if (response.statusCode !== 200 || declared > MAX_BUYER_BYTES) {
      await response.body.dump();
      return { ok: false, reason: `the buyer answered ${response.statusCode} on ${path}` };
    }
    // Lists are sent in pieces, with no length declared: the bytes are counted as they come.
    const bytes = await readStreamBody(response.body, MAX_BUYER_BYTES).catch((error) => {
      if (error instanceof SvcError && error.code === 'body_too_large') return null;
      throw error;
    });
    if (bytes === null) return { ok: false, reason: 'the buyer answer is too large' };
    return { ok: true, body: JSON.parse(bytes.toString('utf8')) as Record<string, unknown> };
  } catch (error) {
    return {
      ok: false,
      reason: `the buyer is unreachable (${error instanceof Error ? error.message : String(error)})`,
    };
  }
}

/** Sellers the buyer sees, with offers, prices and reputation; plus the buyer's network status. */
export async function networkPage(deps: ConsoleDeps) {
  const [status, peers] = await Promise.all([
    askBuyer(deps, '/_svc/status'),
    askBuyer(deps, '/_svc/peers'),
  ]);
  return {
    status: status.ok ? status.body : null,
    peers: peers.ok ? ((peers.body.peers as unknown[]) ?? []) : [],
    problem: !peers.ok ? peers.reason : !status.ok ? status.reason : null,
  };
}

/** Deposit addresses of the workspaces the viewer may see, their keys' credits, open channels. */
export async function walletsPage(deps: ConsoleDeps, viewer: StaffViewer) {
  const [workspaces, keys, channels] = await Promise.all([
    deps.store.listWorkspaces(),
    deps.store.listKeys(viewer.kind === 'member' ? { memberId: viewer.member.id } : {}),
    viewer.kind === 'admin'
      ? askBuyer(deps, '/_svc/channels')
      : Promise.resolve({ ok: true, body: { channels: [] } } as BuyerAnswer),
  ]);
  const visible = workspaces.filter(
    (w) => viewer.kind === 'admin' || viewer.member.workspaces.some((m) => m.workspaceId === w.id),
  );
  return {
    wallets: visible.map((w) => {
      const own = keys.filter((k) => k.workspaceId === w.id);
      const credits = own.reduce((sum, k) => sum + k.toppedUpMicro, 0n);
      return {
        workspace: w.name,
        identity: w.identity,
        address: deps.buyerAddress(w.identity),
        keys: own.length,
        toppedUpUsd: formatUsd(credits),
      };
    }),
    credits: keys
      .filter((k) => k.toppedUpMicro > 0n)
      .map((k) => ({ keyId: k.id, label: k.label, toppedUpUsd: formatUsd(k.toppedUpMicro) })),
    channels: channels.ok ? ((channels.body.channels as unknown[]) ?? []) : [],
    problem: channels.ok ? null : channels.reason,
  };
}
