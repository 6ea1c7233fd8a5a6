import { StreamState, YamuxStream } from '@chainsafe/libp2p-yamux/stream';
import { describe, expect, it } from 'vitest';
import { quietComponentLogger } from './quietLogger.js';
import { installLazyWindowUpdates } from './yamuxWindow.js';

const DATA = 0;
const WINDOW_UPDATE = 1;
const SYN = 1;
const ACK = 2;
const FIN = 4;
const INITIAL_WINDOW = 256 * 1024;

interface SentHeader {
  type: number;
  flag: number;
  length: number;
}

function yamuxStream(state: StreamState) {
  installLazyWindowUpdates();
  const sent: SentHeader[] = [];
  const stream = new YamuxStream({
    id: '1',
    streamId: 1,
    state,
    direction: 'inbound',
    log: quietComponentLogger.forComponent('test'),
    getRTT: () => -1,
    sendFrame: (header) => {
      sent.push({ type: header.type, flag: header.flag, length: header.length });
      return true;
    },
  });
  const receive = (bytes: number, flag = 0) =>
    stream.handleData({
      header: { type: 0, flag, streamID: 1, length: bytes, version: 0 },
      data: new Uint8Array(bytes),
    } as unknown as Parameters<YamuxStream['handleData']>[0]);
  return { stream, sent, receive };
}

describe('lazy yamux window updates', () => {
  it('acknowledges a new inbound stream on its first frame, not with an update of its own', () => {
    const { stream, sent, receive } = yamuxStream(StreamState.SYNReceived);
    receive(1000, SYN);
    expect(sent).toEqual([]);
    stream.send(new Uint8Array(10));
    expect(sent).toEqual([{ type: DATA, flag: ACK, length: 10 }]);
    stream.send(new Uint8Array(5));
    expect(sent[1]).toEqual({ type: DATA, flag: 0, length: 5 });
  });

  it('acknowledges a new inbound stream that only closes with its FIN', async () => {
    const { stream, sent, receive } = yamuxStream(StreamState.SYNReceived);
    receive(1000, SYN);
    await stream.close();
    expect(sent).toEqual([{ type: WINDOW_UPDATE, flag: ACK | FIN, length: 0 }]);
  });

  it('opens a new outbound stream with the SYN on its first data frame', () => {
    const { stream, sent } = yamuxStream(StreamState.Init);
    stream.sendWindowUpdate();
    expect(sent).toEqual([]);
    stream.send(new Uint8Array(7));
    expect(sent).toEqual([{ type: DATA, flag: SYN, length: 7 }]);
  });

  it('still acknowledges at once when the first data fills half the window', () => {
    const { sent, receive } = yamuxStream(StreamState.SYNReceived);
    receive(INITIAL_WINDOW / 2 + 1, SYN);
    expect(sent).toEqual([{ type: WINDOW_UPDATE, flag: ACK, length: INITIAL_WINDOW / 2 + 1 }]);
  });

  it('sends no update for small data on an established stream', () => {
    const { sent, receive } = yamuxStream(StreamState.Established);
    for (let i = 0; i < 100; i++) receive(1000);
    expect(sent).toEqual([]);
  });

  it('gives back the whole consumed window once half of it is used', () => {
    const { sent, receive } = yamuxStream(StreamState.Established);
    const chunk = 16 * 1024;
    let received = 0;
    while (sent.length === 0) {
      receive(chunk);
      received += chunk;
    }
    expect(received).toBeGreaterThan(INITIAL_WINDOW / 2);
    expect(sent).toEqual([{ type: WINDOW_UPDATE, flag: 0, length: received }]);
    // The sender never had less than half a window left, and now has all of it again.
    for (let i = 0; i <= INITIAL_WINDOW / chunk / 2; i++) receive(chunk);
    expect(sent).toHaveLength(2);
  });
});
