/** `gateway` section: the keyed gateway. */
import { z } from 'zod';
import { portSchema, usdStringSchema } from './common.js';

export const gatewaySchema = z.strictObject({
  /** 127.0.0.1 by default; set 0.0.0.0 (or --host) to serve other machines. */
  host: z.string().min(1).default('127.0.0.1'),
  port: portSchema.default(8379),
  /**
   * A buyer in another process to forward to (several gateways sharing one buyer); absent = the
   * gateway runs its own buyer in its process (docs/decisions/180-gateway-runs-its-buyer.md).
   */
  buyerUrl: z.url().optional(),
  /** PostgreSQL URL; absent = embedded SQLite in <data-dir>/gateway/. */
  databaseUrl: z.string().optional(),
  topupMinUsd: usdStringSchema.default('2'),
  topupMaxUsd: usdStringSchema.default('500'),
  /** x402 facilitator: a preset name or a base URL. */
  x402Facilitator: z.string().optional(),
  /** Request-log rows older than this are deleted. */
  logRetentionDays: z.number().int().positive().default(90),
  /**
   * The most one request may cost: the amount reserved on every budget before forwarding (less
   * when a budget has less room) and sent to the buyer as `x-svc-max-cost-usd` when a limit applies.
   */
  maxRequestCostUsd: usdStringSchema.default('1'),
  /** Ingress body cap; larger requests get 413. */
  bodyLimitBytes: z
    .number()
    .int()
    .positive()
    .default(32 * 1024 * 1024),
  /** Failed authentications per client address per minute before it is answered 429. */
  authFailuresPerMinute: z.number().int().positive().default(20),
  /**
   * Addresses or CIDR ranges of reverse proxies whose X-Forwarded-For/-Proto/-Host are believed
   * (auth throttle, request log, x402 resource URLs); from anyone else they are ignored.
   */
  trustedProxies: z.array(z.string().min(1).max(64)).max(256).default([]),
});

export type GatewayConfig = z.infer<typeof gatewaySchema>;
