#!/usr/bin/env node
// Fails when a module under src/ can reach itself through relative imports (type-only imports and
// dynamic `import()` count too: a type cycle becomes a runtime one at the first value added, and a
// lazy import cycle can deadlock module evaluation). Tarjan's strongly connected components over
// the graph of `import … from` / `export … from` lines and `import('…')` calls (decision 115).
// Usage: node scripts/check-cycles.mjs [dir]   (default src)
import { relative, resolve } from 'node:path';
import { cyclesOf, importGraph } from './importGraph.mjs';

const root = resolve(process.argv[2] ?? 'src');
const graph = importGraph(root);
const cycles = cyclesOf(graph);

const name = (path) => relative(process.cwd(), path);
if (cycles.length === 0) {
  process.stdout.write(`no import cycles among ${graph.size} modules in ${name(root)}\n`);
} else {
  process.stderr.write(`${cycles.length} import cycle(s) in ${name(root)}:\n`);
  for (const component of cycles) {
    process.stderr.write(`  ${component.map(name).sort().join('  ')}\n`);
  }
  process.exitCode = 1;
}
