/** `svc up` / `svc down` / `svc status`: the whole local network as a supervised process tree. */
export { type DevStatus, devnetStatus, stopDevnet } from './down.js';
export { DEFAULT_DEV_PORTS, type DevPorts, devLayout } from './layout.js';
export { freePort, isPortFree } from './ports.js';
export { runningDevBuyerDir } from './running.js';
export { ComponentStartError } from './Supervisor.js';
export type { DevSeller } from './sellers.js';
export { type RunningDevnet, startDevnet, type UpOptions } from './up.js';
