import { Command, CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import type { CliIo } from './io.js';
import { commandWord, commandWords, createProgram, GROUPS, groupsFor } from './program.js';

function captureIo(): CliIo & { out: () => string } {
  let text = '';
  return {
    stdout: (chunk) => {
      text += chunk;
    },
    stderr: (chunk) => {
      text += chunk;
    },
    env: {},
    isTty: false,
    out: () => text,
  };
}

/** What `argv` prints and how it ends, on a program built for `argv` (lazy) or with every group. */
async function run(argv: string[], lazy: boolean): Promise<string> {
  const io = captureIo();
  const program = await createProgram(io, lazy ? argv : undefined);
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) return `${io.out()}\n[${error.code} ${error.exitCode}]`;
    return `${io.out()}\n[${String(error)}]`;
  }
  return io.out();
}

describe('lazily loaded command groups', () => {
  it('lists, for each group, exactly the top-level commands it registers', async () => {
    const seen = new Set<string>();
    for (const group of GROUPS) {
      const root = new Command('svc');
      (await group.load())(root, captureIo());
      const names = root.commands.flatMap((command) => [command.name(), ...command.aliases()]);
      expect(names.sort()).toEqual([...group.commands].sort());
      for (const name of names) {
        expect(seen.has(name)).toBe(false);
        seen.add(name);
      }
    }
  });

  it('finds the command word after the root options', () => {
    expect(commandWord(['buyer', 'start'])).toBe('buyer');
    expect(commandWord(['--data-dir', 'buyer', 'gateway', 'start'])).toBe('gateway');
    expect(commandWord(['--json', '--log-level', 'debug', 'up'])).toBe('up');
    expect(commandWord(['--config=/x.json', 'status'])).toBe('status');
    expect(commandWord(['--help'])).toBeUndefined();
    expect(commandWord(['--', 'buyer'])).toBeUndefined();
    expect(groupsFor(['buyer', 'start']).map((g) => g.commands)).toEqual([['buyer']]);
    expect(groupsFor(['help', 'buyer'])).toBe(GROUPS);
    expect(groupsFor(['nope'])).toBe(GROUPS);
    expect(groupsFor(['--version'])).toEqual([]);
    expect(groupsFor(['-V'])).toEqual([]);
    expect(groupsFor(['buyer', '--version']).map((g) => g.commands)).toEqual([['buyer']]);
  });

  it('prints the same help and errors as a program with every group', async () => {
    const cases = [
      ['--help'],
      ['help', 'buyer'],
      ['nope'],
      ['--data-dir', '/nonexistent', 'buyer', 'strat'],
      ['buyer', 'start', '--bogus'],
      ['--log-level', 'loud', 'buyer', 'start'],
    ];
    for (const group of GROUPS) {
      for (const name of group.commands) {
        cases.push(['help', name]);
        // The tool launchers pass --help on to the tool they launch.
        if (!['claude', 'codex', 'opencode'].includes(name)) cases.push(['--json', name, '--help']);
      }
      for (const [name, sub] of [
        ['buyer', 'start'],
        ['gateway', 'key'],
        ['network', 'browse'],
      ]) {
        cases.push([name!, sub!, '--help']);
      }
    }
    for (const argv of cases) {
      expect(await run(argv, true), argv.join(' ')).toBe(await run(argv, false));
    }
  });
});

describe('memory policy', () => {
  it('applies to `buyer start` and `gateway start` only, and not over a heap flag of the user', async () => {
    const { applyMemoryPolicy } = await import('./memory.js');
    expect(applyMemoryPolicy(['gateway', 'logs'], {})).toBe(false);
    expect(
      applyMemoryPolicy(['gateway', 'start'], { NODE_OPTIONS: '--max-semi-space-size=16' }),
    ).toBe(false);
    expect(applyMemoryPolicy(['--data-dir', 'buyer', 'seller', 'start'], {})).toBe(false);
    expect(applyMemoryPolicy(['buyer', 'balances'], {})).toBe(false);
    expect(
      applyMemoryPolicy(['buyer', 'start'], { NODE_OPTIONS: '--max-semi-space-size=16' }),
    ).toBe(false);
    expect(
      applyMemoryPolicy(['buyer', 'start'], { NODE_OPTIONS: '--heap-growing-percent=50' }),
    ).toBe(false);
    expect(commandWords(['--data-dir', 'x', 'buyer', '--json', 'start', '--port', '0'])).toEqual([
      'buyer',
      'start',
      '0',
    ]);
  });
});
