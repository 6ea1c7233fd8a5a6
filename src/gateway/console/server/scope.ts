/** What a viewer may see and touch: admins everything, members their own keys and workspaces. */
import { SvcError } from '../../../errors/index.js';
import type { KeyRecord, LogFilter } from '../../store/types.js';
import type { Viewer } from './sessions.js';

export type StaffViewer = Exclude<Viewer, { kind: 'key' }>;

/** Admin or member; a key session gets 403 (it is read-only and sees only itself). */
export function requireStaff(viewer: Viewer): StaffViewer {
  if (viewer.kind === 'key') throw new SvcError('console_forbidden');
  return viewer;
}

/** Admins only. */
export function requireAdmin(viewer: Viewer): Extract<Viewer, { kind: 'admin' }> {
  if (viewer.kind !== 'admin') throw new SvcError('console_forbidden');
  return viewer;
}

/** Narrows a log/key filter to what the viewer may see. */
export function scopedFilter(viewer: StaffViewer, filter: LogFilter): LogFilter {
  return viewer.kind === 'member' ? { ...filter, memberId: viewer.member.id } : filter;
}

/** The key, when the viewer may manage it; otherwise 403 (or 400 for an unknown id). */
export function mayManageKey(viewer: StaffViewer, key: KeyRecord | null): KeyRecord {
  if (!key) throw new SvcError('invalid_argument', { message: 'no such key' });
  if (viewer.kind === 'member' && key.memberId !== viewer.member.id) {
    throw new SvcError('console_forbidden');
  }
  return key;
}
