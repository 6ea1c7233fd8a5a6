/**
 * Starts components in order, each only after the previous one is healthy; stops them in
 * reverse order. A component that fails to start stops the rest and reports its log tail.
 */
import { join } from 'node:path';
import { errorMessage } from '../errors/index.js';
import { ComponentProcess } from './ChildProcess.js';
import { describePortHolder, isPortFree } from './ports.js';
import { waitFor } from './waitFor.js';

/** What `svc up` knows about one component before starting it. */
export interface ComponentSpec {
  name: string;
  /** Shown on the progress line, e.g. "seller 2 (messages, 1.50/5.00 USD per M)". */
  label: string;
  command: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  /** Ports the component will bind; checked before it starts. */
  ports?: number[];
  /** Health check; true when ready. */
  ready: () => Promise<boolean>;
  readyTimeoutMs?: number;
  /** Shown after "ready" on the progress line (e.g. a URL). */
  detail?: string;
}

export interface RunningComponent {
  spec: ComponentSpec;
  process: ComponentProcess;
  /** Components started in the same step are stopped together. */
  step: number;
}

/** A spec, or a function that builds it once the previous steps are ready. */
export type SpecEntry = ComponentSpec | (() => Promise<ComponentSpec>);
/** One step: a component, or several started at once. */
export type StartStep = SpecEntry | SpecEntry[];

async function resolveSpec(entry: SpecEntry): Promise<ComponentSpec> {
  return typeof entry === 'function' ? entry() : entry;
}

export class ComponentStartError extends Error {
  override name = 'ComponentStartError';
}

export interface SupervisorOptions {
  logDir: string;
  /** Progress output (one line per component). */
  print: (line: string) => void;
}

export class Supervisor {
  private readonly options: SupervisorOptions;
  readonly running: RunningComponent[] = [];

  constructor(options: SupervisorOptions) {
    this.options = options;
  }

  /** Starts every spec in order; on any failure stops what started and throws. */
  async startAll(steps: StartStep[]): Promise<void> {
    for (const [index, step] of steps.entries()) {
      try {
        const entries = Array.isArray(step) ? step : [step];
        // Settle every start of a parallel step before stopping, so none is left behind.
        const results = await Promise.allSettled(
          entries.map(async (entry) => this.start(await resolveSpec(entry), index)),
        );
        const failure = results.find((result) => result.status === 'rejected');
        if (failure) throw (failure as PromiseRejectedResult).reason;
      } catch (error) {
        await this.stopAll();
        throw error;
      }
    }
  }

  private async start(spec: ComponentSpec, step: number): Promise<void> {
    for (const port of spec.ports ?? []) {
      if (!(await isPortFree(port))) {
        const holder = describePortHolder(port);
        throw new ComponentStartError(
          `${spec.name}: port ${port} is already in use${holder ? ` by ${holder}` : ''}; stop it or choose another port`,
        );
      }
    }
    const started = Date.now();
    this.options.print(`  starting ${spec.label} ...`);
    const process = new ComponentProcess({
      name: spec.name,
      command: spec.command,
      args: spec.args,
      env: spec.env,
      logFile: join(this.options.logDir, `${spec.name}.log`),
      // Each component gets its own process group so stopping it also stops its children.
      detached: true,
    });
    this.running.push({ spec, process, step });
    const exited = new AbortController();
    void process.exited.then((code) =>
      exited.abort(new ComponentStartError(`${spec.name} exited (${code}) before it was ready`)),
    );
    try {
      await waitFor(async () => (await spec.ready()) || undefined, {
        timeoutMs: spec.readyTimeoutMs ?? 30_000,
        intervalMs: 100,
        signal: exited.signal,
        what: spec.name,
      });
    } catch (error) {
      const tail = process.logTail(20);
      const message = errorMessage(error);
      throw new ComponentStartError(
        `${message}\n--- last lines of ${process.logFile} ---\n${tail || '(empty)'}`,
      );
    }
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    this.options.print(
      `  ready    ${spec.label}${spec.detail ? `  ${spec.detail}` : ''}  (${seconds} s)`,
    );
  }

  /** Stops every started component, last step first; components of one step together. */
  async stopAll(): Promise<void> {
    while (this.running.length > 0) {
      const step = this.running.at(-1)!.step;
      const group = this.running.filter((component) => component.step === step);
      this.running.splice(0, this.running.length, ...this.running.filter((c) => c.step !== step));
      await Promise.all(group.map(({ process }) => process.stop()));
    }
  }
}
