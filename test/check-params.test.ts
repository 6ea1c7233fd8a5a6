/**
 * `npm run check:params` (scripts/check-params.mjs) on tiny source trees written here: functions,
 * methods, constructors and arrow functions of up to five positional parameters pass; one of six
 * fails with its file, line and name; a stream state machine's file and TypeScript's `this`
 * parameter are not counted. The real tree is checked by `.ci/run`.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { removeTempDir, tempDir } from '../src/testing/index.js';

const SCRIPT = fileURLToPath(new URL('../scripts/check-params.mjs', import.meta.url));
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) removeTempDir(dir);
});

function tree(files: Record<string, string>): string {
  const root = tempDir('svc-params-');
  dirs.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

async function check(root: string): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [SCRIPT, root], {
      cwd: root,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

const FIVE = 'a: number, b: number, c: number, d: number, e: number';
const SIX = `${FIVE}, f: number`;

describe('check:params', () => {
  it('passes functions of five positional parameters, an options object, and `this`', async () => {
    const root = tree({
      'a/five.ts': [
        `export function five(${FIVE}) { return a + b + c + d + e; }`,
        `export const arrow = (${FIVE}) => a;`,
        `export class K { constructor(${FIVE}) {} method(this: K, ${FIVE}) { return a; } }`,
        'export function named(o: { a: 1; b: 2; c: 3; d: 4; e: 5; f: 6 }) { return o; }',
        '',
      ].join('\n'),
    });
    const result = await check(root);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('no function takes more than 5 positional parameters');
  });

  it('fails a function, a method, a constructor and an arrow of six, naming each', async () => {
    const root = tree({
      'a/six.ts': [
        `export function tooMany(${SIX}) { return a; }`,
        `export class K { constructor(${SIX}) {} run(${SIX}) { return a; } }`,
        `export const arrow = (${SIX}) => a;`,
        '',
      ].join('\n'),
    });
    const result = await check(root);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('six.ts:1 tooMany takes 6 positional parameters');
    expect(result.stderr).toContain('six.ts:2 constructor takes 6 positional parameters');
    expect(result.stderr).toContain('six.ts:2 run takes 6 positional parameters');
    expect(result.stderr).toContain('six.ts:3 arrow takes 6 positional parameters');
    expect(result.stderr).toContain('4 problem(s)');
  });

  it('does not count a stream state machine', async () => {
    const root = tree({
      'network/requestServer.ts': `export function step(${SIX}) { return a; }\n`,
    });
    expect((await check(root)).code).toBe(0);
  });
});
