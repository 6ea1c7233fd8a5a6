#!/usr/bin/env node
// Fails when a folder of src/ imports a folder on a higher floor, or when folders on one floor
// import each other in a loop (docs/decisions/182-folder-floors-checked.md). The file-level cycle
// check (check-cycles.mjs) cannot see a loop between folders that passes through different files.
// Test files (`*.test.ts`) are exempt: nothing imports them, so they cannot close a loop, and an
// end-to-end test of a low folder drives it through the ones above (the CLI, the node).
// Usage: node scripts/check-layers.mjs [dir]   (default src)
import { existsSync, readdirSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { cyclesOf, importGraph } from './importGraph.mjs';

/** The floors, bottom up: a folder imports only folders on its own floor or below. */
const FLOORS = [
  // `files`: the filesystem helpers (ensureDir) every store and the identity use.
  ['errors', 'money', 'http', 'protocol', 'testing', 'files'],
  ['config', 'identity', 'log'],
  // `ports`: the interfaces the buyer and the seller call for payments, below both sides.
  ['formats', 'chain', 'contracts', 'network', 'ports'],
  // `x402`: the gateway's top-up payments, beside the payment channels.
  ['catalog', 'routing', 'payments', 'x402'],
  ['audit'],
  ['buyer', 'seller'],
  ['gateway'],
  ['indexer', 'tunnel'],
  ['node'],
  ['devnet'],
  ['cli'],
];

/**
 * Imports allowed against the floors, each with its reason. `from` is a path prefix under the
 * checked folder, `to` the folder it may import. One that no longer matches an import fails the
 * check, so none outlives its reason.
 */
const EXCEPTIONS = [
  {
    from: 'audit/testing/',
    to: 'seller',
    why: "the audit fixtures' in-process market answers with the real demo model (seller's demoAnswer); only tests and benches load them",
  },
];

const root = resolve(process.argv[2] ?? 'src');
const floorOf = new Map(FLOORS.flatMap((folders, at) => folders.map((name) => [name, at + 1])));
const problems = [];

const folders = readdirSync(root, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);
for (const folder of folders) {
  if (!floorOf.has(folder)) {
    problems.push(
      `${show(join(root, folder))} has no floor: add it to FLOORS in scripts/check-layers.mjs`,
    );
  }
}

/** The top folder of `file` under the root (undefined for a file at the root itself). */
function folderOf(file) {
  const parts = relative(root, file).split(sep);
  return parts.length > 1 ? parts[0] : undefined;
}

function show(path) {
  return relative(process.cwd(), path) || '.';
}

function floorName(folder) {
  return `floor ${floorOf.get(folder)} (${folder})`;
}

const used = new Set();
function excepted(file, toFolder) {
  const path = relative(root, file).split(sep).join('/');
  const rule = EXCEPTIONS.find((entry) => path.startsWith(entry.from) && entry.to === toFolder);
  if (rule) used.add(rule);
  return rule !== undefined;
}

// Same-floor imports between folders, kept to find loops: folder -> folder -> [file, imported].
const sideways = new Map();
for (const [file, targets] of importGraph(root)) {
  if (file.endsWith('.test.ts')) continue;
  const from = folderOf(file);
  if (!floorOf.has(from)) continue;
  for (const target of targets) {
    const to = folderOf(target);
    if (to === from || !floorOf.has(to)) continue;
    if (floorOf.get(to) > floorOf.get(from)) {
      if (!excepted(file, to)) {
        problems.push(
          `${show(file)} on ${floorName(from)} imports ${show(target)} on ${floorName(to)}, a higher floor`,
        );
      }
    } else if (floorOf.get(to) === floorOf.get(from)) {
      if (!sideways.has(from)) sideways.set(from, new Map());
      if (!sideways.get(from).has(to)) sideways.get(from).set(to, [file, target]);
    }
  }
}

const folderGraph = new Map([...sideways].map(([from, tos]) => [from, [...tos.keys()]]));
for (const to of [...folderGraph.values()].flat())
  if (!folderGraph.has(to)) folderGraph.set(to, []);
for (const loop of cyclesOf(folderGraph)) {
  const through = [];
  for (const from of loop) {
    for (const [to, [file, target]] of sideways.get(from) ?? []) {
      if (loop.includes(to)) through.push(`${show(file)} imports ${show(target)}`);
    }
  }
  problems.push(
    `folders ${loop.sort().join(', ')} on ${floorName(loop[0])} import each other: ${through.join('; ')}`,
  );
}

for (const rule of EXCEPTIONS) {
  if (!used.has(rule) && existsSync(join(root, rule.from))) {
    problems.push(`exception ${rule.from} -> ${rule.to} matches no import any more: remove it`);
  }
}

if (problems.length === 0) {
  process.stdout.write(
    `no layer violations among ${folders.length} folders on ${FLOORS.length} floors in ${show(root)}\n`,
  );
} else {
  process.stderr.write(`${problems.length} layer violation(s) in ${show(root)}:\n`);
  for (const problem of problems) process.stderr.write(`  ${problem}\n`);
  process.exitCode = 1;
}
