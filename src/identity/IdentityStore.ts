/**
 * Buyer identities: the `default` wallet in `<data-dir>/identity.key`, plus named
 * identities in `<data-dir>/identities/`. A named identity's key is stored beside it, or held
 * outside by reference (`env:VAR` / `file:path`), in which case only the reference is stored.
 * A reference that cannot be resolved fails loudly; nothing ever falls back to another wallet.
 * Removing an identity archives it; keys are never deleted.
 */
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import type { Hex } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import { SvcError } from '../errors/index.js';
import { ensureDir } from '../files/index.js';
import { DEFAULT_IDENTITY } from './defaultName.js';
import { accountOf } from './digestSigner.js';
import { type PeerId, peerIdFromAddress } from './peerId.js';
import { addressOf, newPrivateKey, parsePrivateKey } from './privateKey.js';

const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/;

/** Where an identity's private key lives. */
export type KeySource = 'stored' | 'env' | 'file';

/** What is stored about an identity (never the key when it is referenced). */
export interface IdentityRecord {
  name: string;
  address: `0x${string}`;
  peerId: PeerId;
  source: KeySource;
  /** `env:VAR` or `file:/abs/path` for referenced keys. */
  reference?: string;
  createdAt: string;
}

/** An identity ready to sign. */
export interface LoadedIdentity {
  record: IdentityRecord;
  privateKey: Hex;
  account: PrivateKeyAccount;
}

/** Result of listing: a record, plus why it cannot load when it cannot. */
export interface IdentityListing extends IdentityRecord {
  loadable: boolean;
  problem?: string;
}

function identityError(message: string, cause?: unknown): SvcError {
  return new SvcError('identity_error', { message, cause });
}

/** Rejects names that could escape the folder or collide with the default wallet. */
export function validateIdentityName(name: string): void {
  if (!NAME_PATTERN.test(name)) {
    throw identityError(
      `"${name}" is not a valid identity name: use letters, digits, "-" and "_" (up to 63), starting with a letter or digit`,
    );
  }
}

/** Manages the identities of one data directory. */
export class IdentityStore {
  readonly dataDir: string;
  private readonly env: NodeJS.ProcessEnv;

  constructor(dataDir: string, env: NodeJS.ProcessEnv = process.env) {
    this.dataDir = dataDir;
    this.env = env;
  }

  private get defaultKeyPath(): string {
    return join(this.dataDir, 'identity.key');
  }

  private get folder(): string {
    return join(this.dataDir, 'identities');
  }

  private recordPath(name: string): string {
    return join(this.folder, `${name}.json`);
  }

  /**
   * The file whose presence says a named identity exists (removing it moves the file away), for
   * a long-running user to watch; undefined for the default wallet, which cannot be removed.
   */
  recordFile(name: string): string | undefined {
    if (name === DEFAULT_IDENTITY) return undefined;
    validateIdentityName(name);
    return this.recordPath(name);
  }

  /** True when `name` was removed: its files are in the archive and none are in use. */
  private wasRemoved(name: string): boolean {
    const archive = join(this.folder, 'archive');
    if (!existsSync(archive)) return false;
    return readdirSync(archive).some((entry) => entry.startsWith(`${name}-`));
  }

  private keyPath(name: string): string {
    return join(this.folder, `${name}.key`);
  }

  /** Loads the default wallet, creating it on first use (mode 0600). */
  loadDefault(): LoadedIdentity {
    const path = this.defaultKeyPath;
    if (!existsSync(path)) {
      ensureDir(this.dataDir);
      try {
        writeFileSync(path, `${newPrivateKey()}\n`, { mode: 0o600, flag: 'wx' });
      } catch (error) {
        // Another process created it first: use theirs.
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
    }
    const privateKey = this.readKeyFile(path, `default wallet ${path}`);
    const address = addressOf(privateKey);
    return {
      privateKey,
      account: accountOf(privateKey),
      record: {
        name: DEFAULT_IDENTITY,
        address,
        peerId: peerIdFromAddress(address),
        source: 'stored',
        createdAt: this.createdAtOf(path),
      },
    };
  }

  /** Loads an identity by name, failing loudly when its key cannot be resolved. */
  load(name: string): LoadedIdentity {
    if (name === DEFAULT_IDENTITY) return this.loadDefault();
    validateIdentityName(name);
    const record = this.readRecord(name);
    const privateKey = this.resolveKey(record);
    const address = addressOf(privateKey);
    if (address.toLowerCase() !== record.address.toLowerCase()) {
      throw identityError(
        `identity "${name}": the key at ${record.reference ?? this.keyPath(name)} belongs to ${address}, not ${record.address} as recorded; refusing to use a different wallet`,
      );
    }
    return { record, privateKey, account: accountOf(privateKey) };
  }

  /** True when a named identity (or the default) exists. */
  has(name: string): boolean {
    if (name === DEFAULT_IDENTITY) return true;
    return NAME_PATTERN.test(name) && existsSync(this.recordPath(name));
  }

  /**
   * Creates a named identity: a new stored key, or a reference (`env:VAR` / `file:path`) that
   * must resolve to a valid key now. Nothing is written when anything is wrong.
   */
  create(name: string, options: { keyFrom?: string } = {}): IdentityRecord {
    validateIdentityName(name);
    if (name === DEFAULT_IDENTITY)
      throw identityError('"default" is the data directory wallet and always exists');
    if (existsSync(this.recordPath(name))) throw identityError(`identity "${name}" already exists`);

    let record: IdentityRecord;
    let storedKey: Hex | undefined;
    const createdAt = new Date().toISOString();
    if (options.keyFrom === undefined) {
      storedKey = newPrivateKey();
      const address = addressOf(storedKey);
      record = { name, address, peerId: peerIdFromAddress(address), source: 'stored', createdAt };
    } else {
      const { source, reference } = parseReference(options.keyFrom);
      const partial = {
        name,
        source,
        reference,
        createdAt,
        address: '0x' as `0x${string}`,
        peerId: '',
      };
      const address = addressOf(this.resolveKey(partial));
      record = { ...partial, address, peerId: peerIdFromAddress(address) };
    }

    ensureDir(this.folder);
    if (storedKey) writeFileSync(this.keyPath(name), `${storedKey}\n`, { mode: 0o600, flag: 'wx' });
    try {
      writeFileSync(this.recordPath(name), `${JSON.stringify(record, null, 2)}\n`, {
        mode: 0o600,
        flag: 'wx',
      });
    } catch (error) {
      if (storedKey) rmSync(this.keyPath(name), { force: true });
      if ((error as NodeJS.ErrnoException).code === 'EEXIST')
        throw identityError(`identity "${name}" already exists`);
      throw error;
    }
    return record;
  }

  /** Lists the default identity and every named one, saying which cannot load and why. */
  list(): IdentityListing[] {
    const out: IdentityListing[] = [{ ...this.loadDefault().record, loadable: true }];
    if (!existsSync(this.folder)) return out;
    const names = readdirSync(this.folder)
      .filter((file) => file.endsWith('.json'))
      .map((file) => file.slice(0, -'.json'.length))
      .filter((name) => NAME_PATTERN.test(name))
      .sort();
    for (const name of names) {
      const record = this.readRecord(name);
      try {
        this.load(name);
        out.push({ ...record, loadable: true });
      } catch (error) {
        out.push({ ...record, loadable: false, problem: (error as Error).message });
      }
    }
    return out;
  }

  /** Stops using an identity and moves its files to `identities/archive/`; returns the archive folder. */
  remove(name: string): string {
    validateIdentityName(name);
    if (name === DEFAULT_IDENTITY) throw identityError('the default identity cannot be removed');
    this.readRecord(name);
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    const archive = join(this.folder, 'archive', `${name}-${stamp}`);
    mkdirSync(archive, { recursive: true, mode: 0o700 });
    if (existsSync(this.keyPath(name)))
      renameSync(this.keyPath(name), join(archive, `${name}.key`));
    renameSync(this.recordPath(name), join(archive, `${name}.json`));
    return archive;
  }

  private readRecord(name: string): IdentityRecord {
    const path = this.recordPath(name);
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        if (this.wasRemoved(name)) {
          throw new SvcError('identity_removed', {
            message: `Identity "${name}" was removed (\`svc buyer identity remove\`) and pays for nothing more. Create it again with \`svc buyer identity create ${name}\`, or give the key another identity.`,
            details: { identity: name },
          });
        }
        throw identityError(`no identity named "${name}" (see \`svc buyer identity list\`)`);
      }
      throw identityError(`identity "${name}": cannot read ${path}`, error);
    }
    try {
      return JSON.parse(text) as IdentityRecord;
    } catch (error) {
      throw identityError(`identity "${name}": ${path} is not valid JSON`, error);
    }
  }

  private resolveKey(record: Pick<IdentityRecord, 'name' | 'source' | 'reference'>): Hex {
    switch (record.source) {
      case 'stored':
        return this.readKeyFile(this.keyPath(record.name), `identity "${record.name}"`);
      case 'env': {
        const variable = record.reference!.slice('env:'.length);
        const value = this.env[variable];
        if (value === undefined || value.trim() === '') {
          throw identityError(
            `identity "${record.name}": environment variable ${variable} is not set; the identity is not loaded`,
          );
        }
        return this.parseKey(value, `environment variable ${variable}`, record.name);
      }
      case 'file': {
        const path = record.reference!.slice('file:'.length);
        return this.readKeyFile(path, `identity "${record.name}" key file ${path}`);
      }
    }
  }

  private readKeyFile(path: string, what: string): Hex {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const reason =
        code === 'ENOENT'
          ? 'does not exist'
          : code === 'EACCES'
            ? 'is not readable'
            : `cannot be read (${code})`;
      throw identityError(`${what}: ${path} ${reason}`, error);
    }
    return this.parseKey(text, path, what);
  }

  private parseKey(text: string, source: string, what: string): Hex {
    try {
      return parsePrivateKey(text, source);
    } catch (error) {
      throw identityError(`${what}: ${(error as Error).message}`, error);
    }
  }

  /** A key file is written once, so its modification time is its creation time. */
  private createdAtOf(path: string): string {
    return new Date(statSync(path).mtimeMs).toISOString();
  }
}

/** Parses `env:VAR` or `file:path` (relative paths resolved against the working directory). */
export function parseReference(text: string): { source: 'env' | 'file'; reference: string } {
  if (text.startsWith('env:')) {
    const variable = text.slice(4);
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(variable)) {
      throw identityError(`"${text}": expected env:<VARIABLE_NAME>`);
    }
    return { source: 'env', reference: `env:${variable}` };
  }
  if (text.startsWith('file:')) {
    const path = text.slice(5);
    if (path === '') throw identityError(`"${text}": expected file:<path>`);
    return { source: 'file', reference: `file:${isAbsolute(path) ? path : resolve(path)}` };
  }
  throw identityError(`"${text}": a key reference is env:<VARIABLE_NAME> or file:<path>`);
}
