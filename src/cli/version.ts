/** The package version, read from package.json (same relative place from src/ and dist/). */
import { readFileSync } from 'node:fs';

export function packageVersion(): string {
  const url = new URL('../../package.json', import.meta.url);
  return (JSON.parse(readFileSync(url, 'utf8')) as { version: string }).version;
}
