#!/usr/bin/env node
// Fails when a function, method, constructor or arrow function under src/ takes more than
// MAX positional parameters: past five, a call site no longer says which argument is which, and
// an options object should name them. The stream state machines are exempt (ALLOWED below): their
// step functions carry the machine's state through each transition on purpose.
// Usage: node scripts/check-params.mjs [dir...]   (default src)
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { parseSync } from 'oxc-parser';

const MAX = 5;

/**
 * The stream state machines (paths under the checked folder): their steps pass the stream, its
 * reader, its abort controller and its deadlines along each transition, and an options object
 * there would only rename the machine's state.
 */
const ALLOWED = [
  'network/requestServer.ts',
  'network/requestReply.ts',
  'network/requestStream.ts',
  'buyer/deliverStream.ts',
  'formats/translateStream.ts',
  'formats/stream/',
];

const FUNCTIONS = new Set([
  'FunctionDeclaration',
  'FunctionExpression',
  'ArrowFunctionExpression',
  'TSDeclareFunction',
  'TSMethodSignature',
  'TSCallSignatureDeclaration',
  'TSConstructSignatureDeclaration',
  'TSFunctionType',
  'TSConstructorType',
]);

const roots = (process.argv.length > 2 ? process.argv.slice(2) : ['src']).map((dir) =>
  resolve(dir),
);

function sourceFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sourceFiles(path);
    return /\.(ts|mts)$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** 1-based line of a character offset. */
function lineOf(text, offset) {
  let line = 1;
  for (let at = text.indexOf('\n'); at !== -1 && at < offset; at = text.indexOf('\n', at + 1)) {
    line += 1;
  }
  return line;
}

/** A name for the function at `node`, from its own id or the property/variable holding it. */
function nameOf(node, parent) {
  if (node.id?.name) return node.id.name;
  if (node.key?.name) return node.key.name;
  if (parent?.key?.name) return parent.key.name;
  if (parent?.id?.name) return parent.id.name;
  return '(anonymous)';
}

/** Positional parameters: TypeScript's `this` parameter is a type annotation, not an argument. */
function positional(params) {
  return params.filter(
    (param) =>
      param.type !== 'TSThisParameter' && !(param.type === 'Identifier' && param.name === 'this'),
  );
}

function walk(node, parent, visit) {
  if (node === null || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    for (const child of node) walk(child, parent, visit);
    return;
  }
  if (typeof node.type === 'string') visit(node, parent);
  for (const [key, child] of Object.entries(node)) {
    if (key !== 'parent' && child !== null && typeof child === 'object') {
      walk(child, typeof node.type === 'string' ? node : parent, visit);
    }
  }
}

const problems = [];
for (const [root, file] of roots.flatMap((root) => sourceFiles(root).map((file) => [root, file]))) {
  const path = relative(root, file);
  if (ALLOWED.some((prefix) => path.startsWith(prefix))) continue;
  const text = readFileSync(file, 'utf8');
  const parsed = parseSync(file, text);
  if (parsed.errors.length > 0) {
    problems.push(`${path}: cannot parse (${parsed.errors[0].message})`);
    continue;
  }
  walk(parsed.program, undefined, (node, parent) => {
    if (!FUNCTIONS.has(node.type)) return;
    const params = node.params ?? node.parameters ?? [];
    const count = positional(params).length;
    if (count <= MAX) return;
    const where = `${relative(process.cwd(), file)}:${lineOf(text, node.start)}`;
    problems.push(`${where} ${nameOf(node, parent)} takes ${count} positional parameters`);
  });
}

if (problems.length > 0) {
  process.stderr.write(
    `${problems.join('\n')}\n${problems.length} problem(s): more than ${MAX} positional parameters; take an options object\n`,
  );
  process.exit(1);
}
process.stdout.write(`no function takes more than ${MAX} positional parameters\n`);
