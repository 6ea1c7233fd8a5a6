/** The console's static files: read once from src/gateway/console/assets and the bundled uPlot package. */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface Asset {
  contentType: string;
  body: Buffer;
}

const ASSET_DIR = fileURLToPath(new URL('../assets/', import.meta.url));
const require = createRequire(import.meta.url);
const UPLOT_DIR = dirname(require.resolve('uplot'));
const QRCODE_DIR = dirname(require.resolve('qrcode-generator'));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

/** URL name -> file on disk; nothing else is served. */
const FILES: Record<string, string> = {
  'index.html': join(ASSET_DIR, 'index.html'),
  'app.js': join(ASSET_DIR, 'app.js'),
  'api.js': join(ASSET_DIR, 'api.js'),
  'ui.js': join(ASSET_DIR, 'ui.js'),
  'pages.js': join(ASSET_DIR, 'pages.js'),
  'admin.js': join(ASSET_DIR, 'admin.js'),
  'forms.js': join(ASSET_DIR, 'forms.js'),
  'members.js': join(ASSET_DIR, 'members.js'),
  'app.css': join(ASSET_DIR, 'app.css'),
  'network.js': join(ASSET_DIR, 'network.js'),
  'policies.js': join(ASSET_DIR, 'policies.js'),
  'locale.js': join(ASSET_DIR, 'locale.js'),
  'uplot.js': join(UPLOT_DIR, 'uPlot.iife.min.js'),
  'qrcode.js': join(QRCODE_DIR, 'qrcode.mjs'),
  'uplot.css': join(UPLOT_DIR, 'uPlot.min.css'),
};

const cache = new Map<string, Asset>();

/** The asset called `name`, or undefined. */
export function asset(name: string): Asset | undefined {
  const path = FILES[name];
  if (!path) return undefined;
  let found = cache.get(name);
  if (!found) {
    const ext = name.slice(name.lastIndexOf('.'));
    found = { contentType: TYPES[ext] ?? 'application/octet-stream', body: readFileSync(path) };
    cache.set(name, found);
  }
  return found;
}
