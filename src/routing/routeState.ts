/**
 * Persisted routing state in `<data-dir>/buyer/state.json`: the default route that model `svc`
 * follows (the headless form of a desktop selection) and the session pin. Both survive restarts;
 * a running buyer re-reads the file when a watch says it changed, so a CLI edit applies on the
 * next request once the watch reports it, within 1 s at most (src/config/fileChanges.ts).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { ensureDir, FileChanges, writeFileAtomic } from '../config/index.js';
import { SvcError } from '../errors/index.js';
import { type PeerId, parsePeerId } from '../identity/index.js';

const stateSchema = z.object({
  defaultRoute: z.string().min(1).optional(),
  sessionPin: z.string().optional(),
});

export interface RouteState {
  /** A model name or `<peer_id>@<service_id>`. */
  defaultRoute?: string;
  sessionPin?: PeerId;
}

/** Reads and writes the routing state of one data directory. */
export class RouteStateStore {
  readonly path: string;
  private readonly changes: FileChanges;
  private cached: { mtimeMs: number; state: RouteState } | undefined;

  constructor(dataDir: string) {
    this.path = join(dataDir, 'buyer', 'state.json');
    this.changes = new FileChanges(this.path, true);
  }

  /** The current state (cached until the file changes). */
  read(): RouteState {
    const mtimeMs = this.changes.mtimeMs();
    if (mtimeMs === undefined) return {};
    if (this.cached?.mtimeMs === mtimeMs) return this.cached.state;
    const parsed = stateSchema.safeParse(JSON.parse(readFileSync(this.path, 'utf8')));
    if (!parsed.success) {
      throw new SvcError('invalid_config', {
        message: `${this.path} is not a valid buyer state file; fix or delete it.`,
      });
    }
    const state: RouteState = {};
    if (parsed.data.defaultRoute) state.defaultRoute = parsed.data.defaultRoute;
    if (parsed.data.sessionPin) state.sessionPin = parsePeerId(parsed.data.sessionPin);
    this.cached = { mtimeMs, state };
    return state;
  }

  /** Applies `change` and writes the file atomically. */
  update(change: (state: RouteState) => RouteState): RouteState {
    const next = change({ ...(existsSync(this.path) ? this.read() : {}) });
    ensureDir(join(this.path, '..'));
    writeFileAtomic(this.path, `${JSON.stringify(next, null, 2)}\n`);
    this.cached = undefined;
    return next;
  }

  /** Stops watching the file. */
  close(): void {
    this.changes.close();
  }
}
