/**
 * `npm run check:params` (scripts/check-params.mjs) on tiny source trees written here: functions,
 * methods, constructors and arrow functions of up to five positional parameters pass; one of six
 * fails with its file, line and name; a stream state machine's file and TypeScript's `this`
 * parameter are not counted. The real tree is checked by `.ci/run`.
 */
import { describe, expect, it } from 'vitest';
import { scriptTrees } from './support/scriptTree.js';

const { tree, check } = scriptTrees('check-params.mjs', 'svc-params-');

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
