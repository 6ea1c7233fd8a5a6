/**
 * An HTTP answer that declares no length: the JSON object `fields` with a `padding` string of
 * about `paddingBytes`, written in 64 KiB pieces as the reader takes them. An infinite padding
 * never ends; it stops when the reader gives the connection up.
 */
import type { Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';

const PIECE = 'x'.repeat(64 * 1024);

export function jsonInPieces(
  res: ServerResponse,
  fields: Record<string, unknown>,
  paddingBytes: number,
): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write(`${JSON.stringify(fields).slice(0, -1)},"padding":"`);
  let left = paddingBytes;
  const more = (): void => {
    while (left > 0) {
      left -= PIECE.length;
      if (res.destroyed) return;
      if (!res.write(PIECE)) return void res.once('drain', more);
    }
    res.end('"}');
  };
  more();
}

/** `server` listening on a loopback port, with a connection pool to it; `close` stops both. */
export async function poolTo(server: Server): Promise<{ pool: Pool; close: () => Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const pool = new Pool(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  const close = async () => {
    await pool.close();
    await new Promise((resolve) => server.close(resolve));
  };
  return { pool, close };
}
