import { describe, expect, it } from 'vitest';
import { deadline } from './deadline.js';

describe('deadline', () => {
  it('aborts with a TimeoutError after the time', async () => {
    const { signal } = deadline(undefined, 5);
    await new Promise((resolve) => signal.addEventListener('abort', resolve));
    expect((signal.reason as DOMException).name).toBe('TimeoutError');
  });

  it('follows the parent and keeps its reason', () => {
    const parent = new AbortController();
    const { signal } = deadline(parent.signal, 60_000);
    const reason = new Error('cancelled');
    parent.abort(reason);
    expect(signal.reason).toBe(reason);
  });

  it('is aborted at once when the parent already is', () => {
    const parent = new AbortController();
    parent.abort(new Error('gone'));
    expect(deadline(parent.signal, 60_000).signal.aborted).toBe(true);
  });

  it('never fires once cleared, and lets go of the parent', async () => {
    const parent = new AbortController();
    const guarded = deadline(parent.signal, 5);
    guarded.clear();
    await new Promise((resolve) => setTimeout(resolve, 20));
    parent.abort(new Error('late'));
    expect(guarded.signal.aborted).toBe(false);
  });
});
