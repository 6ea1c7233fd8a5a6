/**
 * What a probe is expected to cost, for the audits' budget (src/audit/auditor.ts): the buyer's
 * typical answer per identity and model, at each participant's price, scaled up by how far
 * finished probes of the identity cost more than estimated.
 */
import type { Offer } from '../catalog/index.js';
import type { MicroUsd } from '../money/index.js';

export class ProbeCosts {
  /** Per identity: what finished probes were estimated at, and what they cost. */
  private readonly calibration = new Map<string, { estimated: MicroUsd; spent: MicroUsd }>();
  /** Running average cost of the buyer's own answers, per identity and model. */
  private readonly typicalCost = new Map<string, MicroUsd>();

  /** Counts one of the buyer's own answers into its typical cost. */
  noteAnswer(identity: string, modelKey: string, costMicro: MicroUsd): void {
    const key = `${identity}|${modelKey}`;
    const before = this.typicalCost.get(key);
    // A running average over about the last 32 answers.
    this.typicalCost.set(
      key,
      before === undefined ? costMicro : before + (costMicro - before) / 32n,
    );
  }

  /**
   * What a probe costs on average: the buyer's typical answer at each participant's price (the
   * first is the audited seller). Not the cost of the probe at hand: a budget that let only cheap
   * shapes through would make probes smaller than the buyer's traffic, which a seller could see.
   * The day's spend may go over the allowance by one probe; on average it stays within. `from`
   * skips the first participants: a replay does not pay the audited seller again.
   */
  estimate(identity: string, modelKey: string, offers: Offer[], from = 0): MicroUsd {
    const typical = this.typicalCost.get(`${identity}|${modelKey}`) ?? 0n;
    const weight = (offer: Offer) =>
      offer.price.inputMicroPerMillion + offer.price.outputMicroPerMillion;
    const base = weight(offers[0]!);
    let total = 0n;
    for (const offer of offers.slice(from)) {
      total += base > 0n ? (typical * weight(offer)) / base : typical;
    }
    return total;
  }

  /** An estimate scaled up by how far finished probes of `identity` cost more than estimated. */
  calibrated(identity: string, estimate: MicroUsd): MicroUsd {
    const seen = this.calibration.get(identity);
    if (!seen || seen.estimated === 0n || seen.spent <= seen.estimated) return estimate;
    return (estimate * seen.spent) / seen.estimated;
  }

  /** Counts a finished probe: what it was estimated at, and what it cost. */
  calibrate(identity: string, estimated: MicroUsd, spent: MicroUsd): void {
    const seen = this.calibration.get(identity) ?? { estimated: 0n, spent: 0n };
    seen.estimated += estimated;
    seen.spent += spent;
    // Recent probes weigh most: halved once the sums grow past about 100 USD.
    if (seen.estimated > 100_000_000n) {
      seen.estimated /= 2n;
      seen.spent /= 2n;
    }
    this.calibration.set(identity, seen);
  }
}
