/** Printing helpers shared by commands: JSON for scripts, aligned tables for people. */
import type { CliIo } from './io.js';

/** JSON with bigint amounts rendered as strings. */
export function toJson(value: unknown): string {
  return JSON.stringify(value, (_key, v) => (typeof v === 'bigint' ? v.toString() : v), 2);
}

export function printJson(io: CliIo, value: unknown): void {
  io.stdout(`${toJson(value)}\n`);
}

/** Prints rows as a left-aligned table with a header line. */
export function printTable(io: CliIo, headers: string[], rows: string[][]): void {
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column]!)))
      .join('  ')
      .trimEnd();
  io.stdout(`${line(headers)}\n`);
  for (const row of rows) io.stdout(`${line(row)}\n`);
}
