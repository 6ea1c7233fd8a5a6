/** `<data-dir>/dev/state.json`: what `svc up` started, so `svc status` and `svc down` can find it. */
import { readFileSync, rmSync } from 'node:fs';
import { writeFileAtomic } from '../config/index.js';

export interface DevComponentState {
  name: string;
  label: string;
  pid: number;
  /** Start step; components of one step are stopped together. */
  step: number;
  logFile: string;
  /** Health URL or description shown by `svc status`. */
  url?: string;
}

export interface DevState {
  /** The `svc up` process (absent with --detach, which exits once ready). */
  upPid?: number;
  startedAt: string;
  detached: boolean;
  buyerUrl: string;
  gatewayUrl: string;
  chainRpcUrl: string;
  components: DevComponentState[];
}

export function readDevState(path: string): DevState | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as DevState;
  } catch {
    return undefined;
  }
}

export function writeDevState(path: string, state: DevState): void {
  writeFileAtomic(path, `${JSON.stringify(state, null, 2)}\n`);
}

export function clearDevState(path: string): void {
  rmSync(path, { force: true });
}
