/**
 * `npm run bench [-- <name>...]`: runs every bench/<name>.bench.ts (or the named ones) one after
 * another. Each exports `default async function(): Promise<Record<string, unknown>>`; its
 * result is saved to bench/results/<name>.json.
 */
import { readdirSync } from 'node:fs';
import { saveResults } from './lib.js';

const dir = new URL('./', import.meta.url);
const wanted = process.argv.slice(2);
const names = readdirSync(dir)
  .filter((file) => file.endsWith('.bench.ts'))
  .map((file) => file.slice(0, -'.bench.ts'.length))
  .filter((name) => wanted.length === 0 || wanted.includes(name))
  .sort();

if (names.length === 0) {
  console.error(
    wanted.length ? `no benchmark named ${wanted.join(', ')}` : 'no benchmarks in bench/',
  );
  process.exit(1);
}

let failed = false;
for (const name of names) {
  console.log(`\n== ${name} ==`);
  try {
    const module = (await import(new URL(`${name}.bench.ts`, dir).href)) as {
      default: () => Promise<Record<string, unknown>>;
    };
    const results = await module.default();
    console.log(`results: ${saveResults(name, results)}`);
  } catch (error) {
    failed = true;
    console.error(`${name} failed:`, error);
  }
}
process.exit(failed ? 1 : 0);
