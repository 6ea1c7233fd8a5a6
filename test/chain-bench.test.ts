/**
 * `npm run bench -- chain` (docs/guide/production.md): the gas table runs on a real anvil chain,
 * prints a row per operation, and its USD figures are the gas at the stated price.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Table rows `| name | ... |` of a printed markdown table, as cells. */
function rows(text: string): string[][] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('| ---') && !line.includes('---:'))
    .map((line) =>
      line
        .split('|')
        .slice(1, -1)
        .map((cell) => cell.trim()),
    );
}

describe('npm run bench -- chain', () => {
  it('prints the gas of every operation and the chain cost per paid request', async () => {
    // What `npm run bench -- chain` runs (package.json "bench"), under this Node.
    const run = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'bench/run.ts', 'chain'],
      { cwd: ROOT, env: { ...process.env, SVC_BENCH_GAS_GWEI: '0.01', SVC_BENCH_ETH_USD: '3000' } },
    );
    expect(run.stdout).toContain('USD at 0.01 gwei (Base L2 execution) and 3000 USD/ETH');
    const table = rows(run.stdout);
    const operations = new Map(
      table.filter((cells) => cells.length === 5).map((cells) => [cells[0]!, cells]),
    );
    for (const operation of [
      'deploy SvcPayments',
      'deposit (after approve)',
      'depositWithAuthorization (gasless sweep)',
      'openChannel',
      'topUp',
      'settle (later)',
      'close with a final voucher, after settlements',
      'requestClose',
      'reclaim (after the grace period)',
      'withdraw',
    ]) {
      const cells = operations.get(operation);
      expect(cells, operation).toBeDefined();
      const gas = BigInt(cells![2]!);
      expect(gas).toBeGreaterThan(21_000n);
      // gas × 0.01 gwei × 3000 USD/ETH in micro-USD, rounded up: gas × 3 / 100.
      const micro = (gas * 3n + 99n) / 100n;
      expect(cells![4]).toBe(
        `${micro / 1_000_000n}.${String(micro % 1_000_000n).padStart(6, '0')}`,
      );
    }
    // Per paid request: a full 1.00 USD channel of 0.001 USD requests costs a thousandth of
    // its open + settle + close; a one-request channel pays all of it.
    const perRequest = table.filter((cells) => cells[0]!.endsWith(' USD'));
    expect(perRequest.length).toBe(6);
    const full = perRequest.find((cells) => cells[0] === '1.00 USD' && cells[1] === '0.001 USD')!;
    expect(full[2]).toBe('1000');
    const lone = perRequest.find((cells) => cells[0] === '0.01 USD' && cells[1] === '0.01 USD')!;
    expect(lone[2]).toBe('1');
    expect(Number(full[4])).toBeLessThan(Number(lone[4]) / 100);
  }, 120_000);
});
