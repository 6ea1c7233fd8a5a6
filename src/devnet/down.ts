/** `svc down` and `svc status`: stop or inspect what `svc up` started, from its state file. */
import { setTimeout as sleep } from 'node:timers/promises';
import { isAlive } from './ChildProcess.js';
import { devLayout } from './layout.js';
import { clearDevState, type DevState, readDevState } from './state.js';
import { httpReady } from './waitFor.js';

/** Stops the local network; returns the names of what was stopped (empty when nothing ran). */
export async function stopDevnet(
  dataDir: string,
  print: (line: string) => void,
): Promise<string[]> {
  const layout = devLayout(dataDir);
  const state = readDevState(layout.state);
  if (!state) return [];
  const stopped: string[] = [];
  if (state.upPid && isAlive(state.upPid)) {
    // An attached `svc up` stops its own components in order; they count as stopped here.
    const running = state.components.filter((component) => isAlive(component.pid));
    process.kill(state.upPid, 'SIGTERM');
    if (!(await waitGone([state.upPid], 60_000))) process.kill(state.upPid, 'SIGKILL');
    for (const component of [...running].reverse().sort((a, b) => b.step - a.step)) {
      if (isAlive(component.pid)) continue;
      stopped.push(component.name);
      print(`  stopped  ${component.label}`);
    }
  }
  const steps = [...new Set(state.components.map((component) => component.step))].sort(
    (a, b) => b - a,
  );
  for (const step of steps) {
    const group = state.components.filter((c) => c.step === step && isAlive(c.pid));
    for (const component of group) signalGroup(component.pid, 'SIGTERM');
    const pids = group.map((component) => component.pid);
    if (!(await waitGone(pids, 10_000))) for (const pid of pids) signalGroup(pid, 'SIGKILL');
    await waitGone(pids, 5_000);
    for (const component of group) {
      stopped.push(component.name);
      print(`  stopped  ${component.label}`);
    }
  }
  clearDevState(layout.state);
  return stopped;
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, signal);
      return;
    } catch {}
  }
}

async function waitGone(pids: number[], timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (pids.every((pid) => !isAlive(pid))) return true;
    await sleep(100);
  }
  return pids.every((pid) => !isAlive(pid));
}

export interface DevStatus {
  running: boolean;
  state?: DevState;
  components: Array<{
    name: string;
    label: string;
    pid: number;
    alive: boolean;
    url?: string;
    logFile: string;
  }>;
  buyerHealthy: boolean;
  gatewayHealthy: boolean;
}

/** What runs now. */
export async function devnetStatus(dataDir: string): Promise<DevStatus> {
  const state = readDevState(devLayout(dataDir).state);
  if (!state) return { running: false, components: [], buyerHealthy: false, gatewayHealthy: false };
  const components = state.components.map((component) => ({
    ...component,
    alive: isAlive(component.pid),
  }));
  const [buyerHealthy, gatewayHealthy] = await Promise.all([
    httpReady(`${state.buyerUrl}/_svc/status`).catch(() => false),
    httpReady(`${state.gatewayUrl}/v1/models`).catch(() => false),
  ]);
  return {
    running: components.some((c) => c.alive),
    state,
    components,
    buyerHealthy,
    gatewayHealthy,
  };
}
