import { StreamState, YamuxStream } from '@chainsafe/libp2p-yamux/stream';
import { describe, expect, it } from 'vitest';
import { quietComponentLogger } from './quietLogger.js';
import { installLazyWindowUpdates } from './yamuxWindow.js';

const WINDOW_UPDATE = 1;
const ACK = 2;
const SYN = 1;
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
  it('still acknowledges a new inbound stream at once', () => {
    const { sent, receive } = yamuxStream(StreamState.SYNReceived);
    receive(1000, SYN);
    expect(sent).toEqual([{ type: WINDOW_UPDATE, flag: ACK, length: 1000 }]);
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
