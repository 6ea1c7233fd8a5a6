/** What every command can reach: global options, the data dir, config, identities, a logger. */
import type { Command } from 'commander';
import { type LoadedConfig, loadConfig, resolveDataDir } from '../config/index.js';
import type { IdentityStore } from '../identity/index.js';
import { createLogger, type Logger, type LogLevel } from '../log/index.js';
import type { CliIo } from './io.js';

/** Options every command accepts (declared on the root program). */
export interface GlobalOptions {
  dataDir?: string;
  config?: string;
  json?: boolean;
  logLevel?: LogLevel;
}

/** Lazily resolved per-invocation context. */
export class CliContext {
  readonly io: CliIo;
  readonly options: GlobalOptions;
  private loaded: LoadedConfig | undefined;
  private dataDirPath: string | undefined;
  private loggerInstance: Logger | undefined;

  constructor(io: CliIo, options: GlobalOptions) {
    this.io = io;
    this.options = options;
  }

  /** Builds the context of a running command from its global options. */
  static of(command: Command, io: CliIo): CliContext {
    return new CliContext(io, command.optsWithGlobals<GlobalOptions>());
  }

  get json(): boolean {
    return Boolean(this.options.json);
  }

  get dataDir(): string {
    this.dataDirPath ??= resolveDataDir(this.options.dataDir, this.io.env);
    return this.dataDirPath;
  }

  /** Effective config; `flags` (dotted path -> value) override file and env. */
  loadConfig(flags: Record<string, unknown> = {}): LoadedConfig {
    if (Object.keys(flags).length > 0) {
      return loadConfig({
        dataDir: this.dataDir,
        configPath: this.options.config,
        env: this.io.env,
        flags,
      });
    }
    this.loaded ??= loadConfig({
      dataDir: this.dataDir,
      configPath: this.options.config,
      env: this.io.env,
    });
    return this.loaded;
  }

  /** The identities of the data dir; loads the identity folder (and viem) only when asked. */
  async identities(): Promise<IdentityStore> {
    const { IdentityStore } = await import('../identity/index.js');
    return new IdentityStore(this.dataDir, this.io.env);
  }

  get logger(): Logger {
    this.loggerInstance ??= createLogger({ level: this.options.logLevel ?? 'info' });
    return this.loggerInstance;
  }
}
