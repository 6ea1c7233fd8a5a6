/** Loads the effective config: defaults < config file < environment < flags. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { z } from 'zod';
import { ensureDir } from '../files/index.js';
import { writeFileAtomic } from './atomicWrite.js';
import { ConfigError } from './ConfigError.js';
import { applyEnv } from './env.js';
import { setAtPath } from './paths.js';
import { configSchema, type SvcConfig } from './schema.js';

export interface LoadConfigOptions {
  dataDir: string;
  /** Explicit config file (`--config`); default `<data-dir>/config.json`. */
  configPath?: string;
  env?: NodeJS.ProcessEnv;
  /** Flag overrides as dotted path -> value, applied last. */
  flags?: Record<string, unknown>;
}

export interface LoadedConfig {
  config: SvcConfig;
  /** The file consulted (it may not exist). */
  path: string;
  /** The file's own content (empty object when absent). */
  file: Record<string, unknown>;
  fileExists: boolean;
}

/** The config file used for a data dir when `--config` is not given. */
export function configPathFor(dataDir: string, configPath?: string): string {
  return configPath ?? join(dataDir, 'config.json');
}

/** Reads the raw config file; a missing file is an empty object. */
export function readConfigFile(path: string): { file: Record<string, unknown>; exists: boolean } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { file: {}, exists: false };
    if (code === 'EISDIR') throw new ConfigError(`${path}: is a directory, expected a JSON file`);
    throw new ConfigError(`${path}: cannot be read (${code ?? (error as Error).message})`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`${path}: not valid JSON (${(error as Error).message})`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError(`${path}: expected a JSON object at the top level`);
  }
  return { file: parsed as Record<string, unknown>, exists: true };
}

/** Formats the first validation problem as "<where>: <field>: <reason>". */
export function describeIssue(where: string, error: z.ZodError): string {
  const issue = error.issues[0]!;
  let field = issue.path.map(String).join('.');
  let reason = issue.message;
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys.join(', ');
    field = [field, issue.keys[0]].filter(Boolean).join('.');
    reason = `unknown key${issue.keys.length > 1 ? 's' : ''} ${keys}`;
  }
  return `${where}: ${field || '(top level)'}: ${reason}`;
}

/** Validates a raw object against the schema, failing with the path, field and reason. */
export function validateConfig(raw: Record<string, unknown>, where: string): SvcConfig {
  const result = configSchema.safeParse(raw);
  if (!result.success) throw new ConfigError(describeIssue(where, result.error));
  return result.data;
}

/** Loads the effective config. A missing file means built-in defaults. */
export function loadConfig(options: LoadConfigOptions): LoadedConfig {
  const path = configPathFor(options.dataDir, options.configPath);
  const { file, exists } = readConfigFile(path);
  // The file alone must be valid, so an error names the file rather than an env variable.
  validateConfig(file, path);
  let raw = applyEnv(file, options.env ?? process.env);
  validateConfig(raw, `${path} with environment overrides`);
  for (const [flagPath, value] of Object.entries(options.flags ?? {})) {
    if (value !== undefined) raw = setAtPath(raw, flagPath, value);
  }
  const config = validateConfig(raw, 'command-line options');
  return { config, path, file, fileExists: exists };
}

/** Validates and writes a config file object (atomically, mode 0600). */
export function writeConfigFile(
  path: string,
  file: Record<string, unknown>,
  dataDir?: string,
): void {
  validateConfig(file, path);
  if (dataDir) ensureDir(dataDir);
  writeFileAtomic(path, `${JSON.stringify(file, null, 2)}\n`);
}
