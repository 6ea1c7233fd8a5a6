#!/usr/bin/env node
// The registry this project is developed against serves only some platform builds of a few
// packages (e.g. no macOS builds of biome/anvil). `npm install` then leaves those optional
// platform packages out of package-lock.json, and `npm ci` refuses the lock as out of sync.
// This adds the missing optional platform entries, marked with their os/cpu so npm skips them
// on other platforms and installs them where they exist. Run after changing dependencies:
//   node scripts/lock-platforms.mjs [path/to/package-lock.json]
import { readFileSync, writeFileSync } from 'node:fs';

const path = process.argv[2] ?? new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(path, 'utf8'));
const packages = lock.packages;

const OS = ['android', 'darwin', 'linux', 'win32', 'freebsd', 'openbsd', 'netbsd', 'sunos', 'aix'];
const CPU = {
  arm64: 'arm64',
  x64: 'x64',
  amd64: 'x64',
  arm: 'arm',
  ia32: 'ia32',
  x86: 'ia32',
  ppc64: 'ppc64',
  s390x: 's390x',
};

function platformOf(name) {
  const parts = name.split('/').pop().split('-');
  // Some packages spell win32 "windows" in their names (opencode-windows-x64).
  const os = parts
    .map((part) => (part === 'windows' ? 'win32' : part))
    .find((part) => OS.includes(part));
  const cpu = parts.map((part) => CPU[part]).find(Boolean);
  if (!os || !cpu) return undefined;
  const entry = { os: [os], cpu: [cpu] };
  if (os === 'linux') entry.libc = [parts.includes('musl') ? 'musl' : 'glibc'];
  return entry;
}

let added = 0;
for (const [location, meta] of Object.entries(packages)) {
  for (const [dep, version] of Object.entries(meta.optionalDependencies ?? {})) {
    const base = location === '' ? '' : `${location}/`;
    const candidates = [`${base}node_modules/${dep}`, `node_modules/${dep}`];
    if (candidates.some((candidate) => packages[candidate])) continue;
    const platform = platformOf(dep);
    if (!platform) continue;
    packages[`node_modules/${dep}`] = {
      version: version.replace(/^[\^~]/, ''),
      ...(meta.dev ? { dev: true } : {}),
      optional: true,
      ...platform,
    };
    added++;
    console.log(`added ${dep}@${version} (${platform.os}/${platform.cpu})`);
  }
}

const sorted = Object.fromEntries(
  Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))),
);
lock.packages = sorted;
writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`${added} platform entr${added === 1 ? 'y' : 'ies'} added`);
