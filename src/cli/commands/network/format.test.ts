import { describe, expect, it } from 'vitest';
import { peerRecord } from '../../../catalog/testing/peerRecord.js';
import type { CliIo } from '../../io.js';
import { printPeer } from './format.js';

function captured(): { io: CliIo; out: () => string } {
  let text = '';
  return {
    io: { stdout: (t) => (text += t), stderr: () => {}, env: {}, isTty: false },
    out: () => text,
  };
}

describe('svc network peer output', () => {
  const { metadata } = peerRecord({ peerId: 'a', services: [{ id: 'svc-demo-smart' }] });

  it("prints the running buyer's audit verdicts with their p-value", () => {
    const { io, out } = captured();
    printPeer(io, {
      ...metadata,
      offers: [
        {
          serviceId: 'svc-demo-smart',
          audit: {
            verdict: 'failed',
            audits: 14,
            disagreements: 12,
            pValue: 4.6e-7,
          },
        },
      ],
    } as typeof metadata);
    expect(out()).toContain('audits by this buyer (svc audit show <peer> for the probes):');
    expect(out()).toMatch(/svc-demo-smart\s+failed\s+14\s+12\s+4\.6e-7/);
  });

  it('prints no audit table for a peer not audited (or a list without offers)', () => {
    const { io, out } = captured();
    printPeer(io, {
      ...metadata,
      offers: [{ serviceId: 'svc-demo-smart', audit: null }],
    } as typeof metadata);
    printPeer(io, metadata);
    expect(out()).not.toContain('audits by this buyer');
  });
});
