#!/usr/bin/env node
// The svc binary. In a source checkout it runs the TypeScript sources (through tsx);
// in an installed package it runs the compiled dist/.
import { existsSync } from 'node:fs';

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 13)) {
  process.stderr.write(
    `svc needs Node.js 22.13 or newer (this is ${process.versions.node}).\n` +
      "In a checkout, run it through npm (npm start, npm run svc -- <args>, npx svc), which uses the project's Node 24.\n",
  );
  process.exit(1);
}

// `svc gateway logs | head`: a reader that stops reading is not an error (no EPIPE stack trace).
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(process.exitCode ?? 0);
  });
}

const source = new URL('../src/cli/index.ts', import.meta.url);
let cli;
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  cli = await import(source.href);
} else {
  cli = await import('../dist/cli/index.js');
}
process.exitCode = await cli.main(process.argv.slice(2));
