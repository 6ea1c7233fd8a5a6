/**
 * A stand-in for one model vendor (OpenAI chat-completions, OpenAI responses or Anthropic
 * messages) that answers with that vendor's exact wire shapes (src/formats/testing/samples.ts):
 * a tool call when the request offers tools and carries no tool result yet, else the text answer
 * "Hello there!"; streamed when the request asks for it. It records every request it receives.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type ApiFormat, formatSse, pathOfFormat } from '../../src/formats/index.js';
import { RESPONSES, STREAMS } from '../../src/formats/testing/samples.js';

type Json = Record<string, unknown>;

export interface ScriptedVendor {
  /** API root including /v1, as a seller's provider `baseUrl`. */
  baseUrl: string;
  requests: Json[];
  close(): Promise<void>;
}

function items(value: unknown): Json[] {
  return Array.isArray(value) ? (value as Json[]) : [];
}

/** True when the request already carries the result of a tool call, in `format`'s shape. */
export function hasToolResult(format: ApiFormat, body: Json): boolean {
  if (format === 'chat') return items(body.messages).some((m) => m.role === 'tool');
  if (format === 'responses')
    return items(body.input).some((i) => i.type === 'function_call_output');
  return items(body.messages).some((m) => items(m.content).some((b) => b.type === 'tool_result'));
}

export async function startScriptedVendor(format: ApiFormat): Promise<ScriptedVendor> {
  const requests: Json[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== pathOfFormat(format)) {
        res
          .writeHead(404, { 'content-type': 'application/json' })
          .end('{"error":{"message":"no such route"}}');
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Json;
      requests.push(body);
      const offersTools = items(body.tools).length > 0;
      const sample = offersTools && !hasToolResult(format, body) ? 'tool' : 'text';
      if (body.stream === true) {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        for (const event of STREAMS[format][sample]) res.write(formatSse(event));
        res.end();
        return;
      }
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify(RESPONSES[format][sample]));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
