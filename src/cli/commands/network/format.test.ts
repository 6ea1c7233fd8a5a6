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

  it("prints the running buyer's audit verdicts with the last audit's statistic", () => {
    const { io, out } = captured();
    printPeer(io, {
      ...metadata,
      offers: [
        {
          serviceId: 'svc-demo-smart',
          audit: {
            verdict: 'failed',
            audits: 2,
            disagreements: 2,
            evidence: { kind: 'sampled', statistic: 0.41234, pValue: 0.0025 },
          },
        },
      ],
    } as typeof metadata);
    expect(out()).toContain('audits by this buyer:');
    expect(out()).toMatch(/svc-demo-smart\s+failed\s+2\s+2\s+sampled\s+0\.412\s+0\.0025/);
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
