/** The request log as JSON-friendly rows and as CSV (the CLI's `logs --csv` and the console export). */
import { formatUsd } from '../../money/index.js';
import type { LogRow } from '../store/types.js';

/** A log row with an ISO time and the cost as a USD string. */
export function logRowJson(row: LogRow) {
  return {
    ...row,
    at: new Date(row.at).toISOString(),
    costUsd: formatUsd(row.costMicro),
    costMicro: undefined,
  };
}

const CSV_COLUMNS = [
  'at',
  'requestId',
  'keyId',
  'workspaceId',
  'memberId',
  'endUser',
  'method',
  'route',
  'requestedModel',
  'servedModel',
  'peerId',
  'provider',
  'serviceId',
  'status',
  'errorCode',
  'inputTokens',
  'cachedInputTokens',
  'outputTokens',
  'costUsd',
  'latencyMs',
  'ttfbMs',
  'streamed',
] as const;

function csvCell(value: unknown): string {
  let text = value === null || value === undefined ? '' : String(value);
  // A cell starting with = + - @ is a formula to spreadsheets; end users choose some of these values.
  if (/^[=+\-@]/.test(text)) text = `'${text}`;
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** The rows as CSV with a header line. */
export function logsToCsv(rows: readonly LogRow[]): string {
  const lines = [CSV_COLUMNS.join(',')];
  for (const row of rows) {
    const json = logRowJson(row);
    lines.push(CSV_COLUMNS.map((column) => csvCell(json[column])).join(','));
  }
  return `${lines.join('\n')}\n`;
}
