/**
 * `npm run check:layers` (scripts/check-layers.mjs, docs/decisions/182-folder-floors-checked.md)
 * on tiny source trees written here: one that keeps the floors passes; an import up a floor, a
 * loop between folders on one floor and a folder with no floor each fail, naming the files and
 * floors. The real tree is checked by `.ci/run`.
 */
import { describe, expect, it } from 'vitest';
import { scriptTrees } from './support/scriptTree.js';

const { tree, check } = scriptTrees('check-layers.mjs', 'svc-layers-');

describe('check:layers', () => {
  it('passes a tree whose folders import only their own floor or below', async () => {
    const root = tree({
      'errors/index.ts': 'export const code = 1;\n',
      'config/index.ts': "import { code } from '../errors/index.js';\nexport const c = code;\n",
      'identity/index.ts': "import { c } from '../config/index.js';\nexport const i = c;\n",
      'seller/index.ts': "export { i } from '../identity/index.js';\n",
      // A test may drive a low folder through a high one: nothing imports a test.
      'errors/e2e.test.ts': "import '../seller/index.js';\n",
    });
    const run = await check(root);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('no layer violations among 4 folders on 11 floors in .\n');
  });

  it('fails an import up a floor, naming both files and both floors', async () => {
    const root = tree({
      'errors/SvcError.ts': "import { x } from '../log/redact.js';\nexport const y = x;\n",
      'log/redact.ts': 'export const x = 1;\n',
      // A fixture (not a test) is held to its folder's floor.
      'network/testing/peer.ts': "await import('../../seller/index.js');\n",
      'seller/index.ts': 'export {};\n',
    });
    const run = await check(root);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      [
        '2 layer violation(s) in .:',
        '  errors/SvcError.ts on floor 1 (errors) imports log/redact.ts on floor 2 (log), a higher floor',
        '  network/testing/peer.ts on floor 3 (network) imports seller/index.ts on floor 6 (seller), a higher floor',
        '',
      ].join('\n'),
    );
  });

  it('fails folders on one floor that import each other, through different files', async () => {
    const root = tree({
      'config/sections.ts':
        "import { isPeerId } from '../identity/peerId.js';\nexport const s = isPeerId;\n",
      'identity/peerId.ts': 'export const isPeerId = true;\n',
      'identity/store.ts':
        "import { ensureDir } from '../config/dataDir.js';\nexport const d = ensureDir;\n",
      'config/dataDir.ts': 'export const ensureDir = true;\n',
    });
    const run = await check(root);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      'folders config, identity on floor 2 (config) import each other: ',
    );
    expect(run.stderr).toContain('config/sections.ts imports identity/peerId.ts');
    expect(run.stderr).toContain('identity/store.ts imports config/dataDir.ts');
  });

  it('allows a named exception while it is used, and fails it once it is not', async () => {
    const used = tree({
      'audit/testing/market.ts':
        "import { demoAnswer } from '../../seller/index.js';\nexport const m = demoAnswer;\n",
      'seller/index.ts': 'export const demoAnswer = 1;\n',
    });
    expect((await check(used)).code).toBe(0);
    const stale = tree({
      'audit/testing/market.ts': 'export const m = 1;\n',
      'seller/index.ts': 'export const demoAnswer = 1;\n',
    });
    const run = await check(stale);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('exception audit/testing/ -> seller matches no import any more');
  });

  it('fails a folder that has no floor', async () => {
    const root = tree({ 'widgets/index.ts': 'export {};\n' });
    const run = await check(root);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      'widgets has no floor: add it to FLOORS in scripts/check-layers.mjs',
    );
  });
});
