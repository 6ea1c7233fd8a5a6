/**
 * Where the running local network keeps its gateway and buyer state, so that a command typed
 * without `--data-dir` after `npm start` (docs/guide/gateway.md "Gateway") acts on that network
 * (docs/decisions/127-commands-find-the-running-local-network.md).
 */
import { isAlive } from './ChildProcess.js';
import { devLayout } from './layout.js';
import { readDevState } from './state.js';

/** The dev buyer's data directory when `svc up` runs from `dataDir`, else undefined. */
export function runningDevBuyerDir(dataDir: string): string | undefined {
  const layout = devLayout(dataDir);
  const state = readDevState(layout.state);
  if (!state) return undefined;
  const running =
    (state.upPid !== undefined && isAlive(state.upPid)) ||
    state.components.some((component) => component.name === 'gateway' && isAlive(component.pid));
  return running ? layout.buyer : undefined;
}
