import { getEventListeners } from 'node:events';
import { streamPair } from '@libp2p/utils';
import { describe, expect, it } from 'vitest';
import { FrameError, FrameReader, FrameType, writeFrame } from './frames.js';
import { frameLimit } from './requestWire.js';

describe('frame reader', () => {
  it('reads frames split anywhere, and leaves no abort listeners behind on long streams', async () => {
    const [a, b] = await streamPair();
    const reader = new FrameReader(b);
    const controller = new AbortController();
    const sending = (async () => {
      for (let i = 0; i < 40; i++) {
        await writeFrame(a, FrameType.data, new TextEncoder().encode(`chunk ${i}`));
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      await a.close();
    })();
    const seen: string[] = [];
    for (;;) {
      const frame = await reader.read(frameLimit, controller.signal);
      if (!frame) break;
      seen.push(new TextDecoder().decode(frame.payload));
    }
    await sending;
    expect(seen).toHaveLength(40);
    expect(seen.at(-1)).toBe('chunk 39');
    expect(getEventListeners(controller.signal, 'abort').length).toBe(0);
  });

  it('refuses an oversized length before reading the payload, and unknown types', async () => {
    const [a, b] = await streamPair();
    a.send(Uint8Array.of(FrameType.head, 0x7f, 0xff, 0xff, 0xff));
    await expect(new FrameReader(b).read(frameLimit)).rejects.toMatchObject({ kind: 'too_large' });
    const [c, d] = await streamPair();
    c.send(Uint8Array.of(42, 0, 0, 0, 0));
    const error = await new FrameReader(d).read(frameLimit).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FrameError);
    expect(error).toMatchObject({ kind: 'protocol' });
  });
});
