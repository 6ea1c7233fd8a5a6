/**
 * A fake video-generation upstream for tests: `POST <root>/api/v1/video/queue` (and the
 * `/fal/v1/...` twin) queues a job and answers `{queue_id, status: "queued"}`; retrieve
 * answers `{queue_id, status: "in_progress"}` for the first `pollsUntilDone` polls, then a
 * tiny `video/mp4` body. Unknown jobs get 404.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The smallest recognisable mp4: one `ftyp` box. */
export const TINY_MP4 = Buffer.from([
  0x00, 0x00, 0x00, 0x18, 0x66, 0x74, 0x79, 0x70, 0x69, 0x73, 0x6f, 0x6d, 0x00, 0x00, 0x02, 0x00,
  0x69, 0x73, 0x6f, 0x6d, 0x6d, 0x70, 0x34, 0x31,
]);

export interface FakeVideoUpstream {
  /** http://127.0.0.1:<port> — the `baseUrl` of a `video` provider. */
  url: string;
  requests: Array<{ path: string; headers: IncomingHttpHeaders; body: Record<string, unknown> }>;
  close(): Promise<void>;
}

export async function startFakeVideoUpstream(
  options: { pollsUntilDone?: number } = {},
): Promise<FakeVideoUpstream> {
  const pollsUntilDone = options.pollsUntilDone ?? 1;
  const jobs = new Map<string, { polls: number }>();
  const requests: FakeVideoUpstream['requests'] = [];
  let next = 1;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      } catch {
        // left empty
      }
      const path = (req.url ?? '/').split('?')[0]!;
      requests.push({ path, headers: req.headers, body });
      const json = (status: number, value: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(value));
      };
      if (req.method !== 'POST') return json(405, { error: 'method not allowed' });
      if (path.endsWith('/video/queue')) {
        const queueId = `job_${next++}`;
        jobs.set(queueId, { polls: 0 });
        return json(200, { queue_id: queueId, status: 'queued', model: body.model });
      }
      if (path.endsWith('/video/retrieve')) {
        const queueId = String(body.queue_id ?? '');
        const job = jobs.get(queueId);
        if (!job) return json(404, { error: { message: `no job ${queueId}` } });
        job.polls++;
        if (job.polls <= pollsUntilDone) {
          return json(200, { queue_id: queueId, status: 'in_progress' });
        }
        res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': TINY_MP4.length });
        res.end(TINY_MP4);
        return;
      }
      json(404, { error: { message: `no route ${path}` } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
