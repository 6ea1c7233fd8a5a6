/** Routing-policy presets (`@preset/<name>`), owned by a workspace or the organisation (''). */
import type { RoutingPolicy } from '../../policy/types.js';
import type { PresetRecord } from '../types.js';
import { numberOf, type SqlExecutor, type SqlRow, textOf } from './SqlDb.js';

/** The policy column holds `{model, policy}`. */
function presetOf(row: SqlRow): PresetRecord {
  const stored = JSON.parse(textOf(row.policy)) as { model: string | null; policy: RoutingPolicy };
  return {
    name: textOf(row.name),
    owner: textOf(row.owner),
    model: stored.model,
    policy: stored.policy,
    createdAt: numberOf(row.created_at),
  };
}

export async function upsertPreset(db: SqlExecutor, preset: PresetRecord): Promise<void> {
  await db.run(
    `INSERT INTO presets (name, owner, policy, created_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (name, owner) DO UPDATE SET policy = excluded.policy`,
    [
      preset.name,
      preset.owner,
      JSON.stringify({ model: preset.model, policy: preset.policy }),
      preset.createdAt,
    ],
  );
}

export async function getPreset(
  db: SqlExecutor,
  name: string,
  owner: string,
): Promise<PresetRecord | null> {
  const rows = await db.query('SELECT * FROM presets WHERE name = $1 AND owner = $2', [
    name,
    owner,
  ]);
  return rows[0] ? presetOf(rows[0]) : null;
}

export async function listPresets(db: SqlExecutor): Promise<PresetRecord[]> {
  return (await db.query('SELECT * FROM presets ORDER BY owner, name')).map(presetOf);
}

export async function removePreset(db: SqlExecutor, name: string, owner: string): Promise<boolean> {
  return (await db.run('DELETE FROM presets WHERE name = $1 AND owner = $2', [name, owner])) > 0;
}
