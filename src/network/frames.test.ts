import { getEventListeners } from 'node:events';
import { streamPair } from '@libp2p/utils';
import { describe, expect, it } from 'vitest';
import { encodeFrame, encodeFrames, FrameError, FrameReader, FrameType } from './frames.js';
import { writeFrame } from './frameWrites.js';
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

  it('hands out frames of one message as views, an empty last frame, and joins split frames', async () => {
    const [a, b] = await streamPair();
    const reader = new FrameReader(b, undefined, undefined, true);
    const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
    a.send(
      encodeFrames(new Uint8Array(0), [
        [FrameType.head, '{"status":200}'],
        [FrameType.data, new TextEncoder().encode('body')],
        [FrameType.end, new Uint8Array(0)],
      ]),
    );
    const head = await reader.read(frameLimit);
    const data = await reader.read(frameLimit);
    expect(text(head!.payload)).toBe('{"status":200}');
    expect(text(data!.payload)).toBe('body');
    // Views of the one received message, not copies.
    expect(data!.payload.buffer).toBe(head!.payload.buffer);
    // A reader without views copies each payload (it may keep it).
    const [c, d] = await streamPair();
    const copying = new FrameReader(d);
    c.send(
      encodeFrames(new Uint8Array(0), [
        [FrameType.data, new TextEncoder().encode('one')],
        [FrameType.data, new TextEncoder().encode('two')],
      ]),
    );
    const one = await copying.read(frameLimit);
    const two = await copying.read(frameLimit);
    expect(text(two!.payload)).toBe('two');
    expect(two!.payload.buffer).not.toBe(one!.payload.buffer);
    // A zero-length frame at the very end of what arrived.
    expect(await reader.read(frameLimit)).toMatchObject({ type: FrameType.end });
    const split = encodeFrame(FrameType.data, new TextEncoder().encode('split over two messages'));
    a.send(split.subarray(0, 9));
    const reading = reader.read(frameLimit);
    await new Promise((resolve) => setTimeout(resolve, 5));
    a.send(split.subarray(9));
    expect(text((await reading)!.payload)).toBe('split over two messages');
    await a.close();
    expect(await reader.read(frameLimit)).toBeUndefined();
  });
});

describe('frame encoding', () => {
  it('encodes frames after a prefix into one buffer, byte for byte as frame by frame', () => {
    const prefix = Uint8Array.of(7, 8, 9);
    const head = JSON.stringify({ path: '/v1/chat/completions', note: 'é ✓ 𝄞' });
    const body = new TextEncoder().encode('x'.repeat(70_000));
    const joined = Buffer.concat([
      prefix,
      encodeFrame(FrameType.head, new TextEncoder().encode(head)),
      encodeFrame(FrameType.data, body),
      encodeFrame(FrameType.end, new Uint8Array(0)),
    ]);
    const encoded = encodeFrames(prefix, [
      [FrameType.head, head],
      [FrameType.data, body],
      [FrameType.end, new Uint8Array(0)],
    ]);
    expect(encoded.equals(joined)).toBe(true);
  });
});
