/**
 * The identities' signing keys, loaded once (signing must not read files on the request path),
 * with a watch on each named identity's record (src/config/fileChanges.ts): removing an identity
 * (`svc buyer identity remove`) stops its use from its next request on (spec 2.2).
 */
import type { LocalAccount } from 'viem/accounts';
import { FileChanges } from '../../config/index.js';
import type { IdentitySource } from './types.js';

interface LoadedKey {
  account: LocalAccount;
  record: FileChanges | undefined;
  /** The record's mtime when the key was loaded. */
  version: number | undefined;
}

export class IdentityKeys {
  private readonly loaded = new Map<string, LoadedKey>();

  constructor(private readonly identities: IdentitySource) {}

  /**
   * The key a new request pays with, reloaded when its record changed; throws `identity_removed`
   * once the identity was removed (`identity_error` when it cannot load).
   */
  forNewRequest(identity: string): LocalAccount {
    const known = this.loaded.get(identity);
    if (known && (!known.record || known.record.mtimeMs() === known.version)) return known.account;
    known?.record?.close();
    this.loaded.delete(identity);
    const account = this.identities.load(identity).account;
    const file = this.identities.recordFile?.(identity);
    const record = file ? new FileChanges(file) : undefined;
    this.loaded.set(identity, { account, record, version: record?.mtimeMs() });
    return account;
  }

  /**
   * The key that pays for work already admitted (its voucher, a late voucher): the one it was
   * admitted with, even when its identity was removed since, since the seller did the work.
   */
  admitted(identity: string): LocalAccount {
    return this.loaded.get(identity)?.account ?? this.forNewRequest(identity);
  }

  close(): void {
    for (const key of this.loaded.values()) key.record?.close();
    this.loaded.clear();
  }
}
