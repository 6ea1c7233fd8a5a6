/** Routing-policy flags shared by `policy set` and `preset create`. */
import type { Command } from 'commander';
import type { RoutingPolicy } from '../../../gateway/index.js';
import { CliError } from '../../errors.js';
import { parseNumberOption } from '../../options.js';
import type { GatewayModule } from './shared.js';

export interface PolicyFlags {
  allowSellers?: string;
  blockSellers?: string;
  minTrust?: string;
  maxInputPrice?: string;
  maxOutputPrice?: string;
  maxCachedInputPrice?: string;
  maxImagePrice?: string;
  models?: string;
  sort?: string;
}

/** Adds the policy flags to a command. */
export function addPolicyOptions(command: Command): Command {
  return command
    .option('--allow-sellers <peerIds>', 'comma-separated peer ids: only these sellers')
    .option('--block-sellers <peerIds>', 'comma-separated peer ids never to use')
    .option('--min-trust <score>', 'minimum seller trust score (0-100)')
    .option('--max-input-price <usd>', 'cap, USD per million input tokens')
    .option('--max-output-price <usd>', 'cap, USD per million output tokens')
    .option('--max-cached-input-price <usd>', 'cap, USD per million cached input tokens')
    .option('--max-image-price <usd>', 'cap, USD per image')
    .option('--models <list>', 'comma-separated models allowed')
    .option('--sort <order>', 'price, free-first, throughput or latency');
}

function list(text: string | undefined): string[] | undefined {
  return text === undefined
    ? undefined
    : text
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
}

function number(flag: string, text: string | undefined): number | undefined {
  return parseNumberOption(text, flag, 0);
}

/** Builds and validates a policy from the flags. */
export function policyFromFlags(gateway: GatewayModule, flags: PolicyFlags): RoutingPolicy {
  const maxPricing = {
    inputUsdPerMillion: number('--max-input-price', flags.maxInputPrice),
    outputUsdPerMillion: number('--max-output-price', flags.maxOutputPrice),
    cachedInputUsdPerMillion: number('--max-cached-input-price', flags.maxCachedInputPrice),
    imageUsd: number('--max-image-price', flags.maxImagePrice),
  };
  const caps = Object.fromEntries(Object.entries(maxPricing).filter(([, v]) => v !== undefined));
  const candidate = {
    allowedPeerIds: list(flags.allowSellers)?.map((p) => p.toLowerCase().replace(/^0x/, '')),
    blockedPeerIds: list(flags.blockSellers)?.map((p) => p.toLowerCase().replace(/^0x/, '')),
    minTrustScore: number('--min-trust', flags.minTrust),
    maxPricing: Object.keys(caps).length > 0 ? caps : undefined,
    allowedModels: list(flags.models),
    sort: flags.sort,
  };
  const cleaned = Object.fromEntries(Object.entries(candidate).filter(([, v]) => v !== undefined));
  const parsed = gateway.routingPolicySchema.safeParse(cleaned);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new CliError(
      `invalid policy: ${issue?.path.join('.') ?? ''} ${issue?.message ?? ''}`.trim(),
    );
  }
  return parsed.data;
}
