/**
 * Raw HTTP/1.1 over a socket for the hostile suite: what `fetch` refuses to send (smuggled
 * framing, header floods, invalid UTF-8, trickled bodies) goes out byte for byte.
 */
import { connect } from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The error `code` of a JSON error body (either API style), when there is one. */
  code: string | undefined;
}

function codeOf(body: string): string | undefined {
  try {
    const json = JSON.parse(body) as { error?: { code?: unknown; type?: unknown } };
    const code = json.error?.code ?? json.error?.type;
    return typeof code === 'string' ? code : undefined;
  } catch {
    return undefined;
  }
}

/** Parses the first response of `text` (Content-Length or close-delimited bodies). */
export function parseRawResponse(text: string): RawResponse {
  const headEnd = text.indexOf('\r\n\r\n');
  const head = headEnd < 0 ? text : text.slice(0, headEnd);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0)
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = headEnd < 0 ? '' : text.slice(headEnd + 4);
  const length = Number(headers['content-length']);
  if (Number.isFinite(length)) body = Buffer.from(body).subarray(0, length).toString();
  return { status: Number(statusLine.split(' ')[1]), headers, body, code: codeOf(body) };
}

export interface RawOptions {
  /** Bytes sent after the first `payload`, one piece at a time, `trickleMs` apart. */
  trickle?: Buffer[];
  trickleMs?: number;
  /** Gives up after this long (the answer so far is returned). */
  timeoutMs?: number;
}

/**
 * Sends `payload` (then any trickled pieces) on a fresh connection and reads until the server
 * closes it, a complete Content-Length response arrived, or the timeout.
 */
export function rawRequest(
  url: string,
  payload: Buffer | string,
  options: RawOptions = {},
): Promise<RawResponse> {
  const { port, hostname } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(parseRawResponse(Buffer.concat(chunks).toString('utf8')));
    };
    const timer = setTimeout(finish, options.timeoutMs ?? 15_000);
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      const sofar = parseRawResponse(Buffer.concat(chunks).toString('utf8'));
      const length = Number(sofar.headers['content-length']);
      if (Number.isFinite(length) && Buffer.byteLength(sofar.body) >= length) finish();
    });
    socket.on('close', finish);
    socket.on('error', finish);
    socket.write(payload);
    void (async () => {
      for (const piece of options.trickle ?? []) {
        await new Promise((r) => setTimeout(r, options.trickleMs ?? 50));
        if (settled || socket.destroyed) return;
        socket.write(piece);
      }
    })();
  });
}

/** A POST with a JSON content type and the given body bytes (Content-Length framing). */
export function postBytes(path: string, body: Buffer | string, extraHeaders = ''): Buffer {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  return Buffer.concat([
    Buffer.from(
      `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${bytes.length}\r\nConnection: close\r\n${extraHeaders}\r\n`,
    ),
    bytes,
  ]);
}

/** Another client's GET answers with 200 (the process is alive and its event loop free). */
export async function answersAnotherClient(
  url: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<boolean> {
  const response = await fetch(`${url}${path}`, { headers });
  await response.arrayBuffer();
  return response.status === 200;
}
