/** Environment variables that override the config file (and are overridden by flags). */
import { ConfigError } from './ConfigError.js';
import { setAtPath } from './paths.js';

type Parse = (text: string) => unknown;

const integer: Parse = (text) => {
  if (!/^\d+$/.test(text)) throw new TypeError('expected a whole number');
  return Number(text);
};
const number: Parse = (text) => {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value)) throw new TypeError('expected a number');
  return value;
};
const string: Parse = (text) => text;
const list: Parse = (text) =>
  text
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);

/** Environment variable -> config path and parser. Documented in docs/guide/configuration.md "Configuration". */
export const ENV_OVERRIDES: ReadonlyArray<{ variable: string; path: string; parse: Parse }> = [
  { variable: 'SVC_BUYER_PORT', path: 'buyer.port', parse: integer },
  {
    variable: 'SVC_MIN_TRUST_SCORE',
    path: 'buyer.routingPreferences.minTrustScore',
    parse: number,
  },
  { variable: 'SVC_GATEWAY_HOST', path: 'gateway.host', parse: string },
  { variable: 'SVC_GATEWAY_PORT', path: 'gateway.port', parse: integer },
  { variable: 'SVC_BUYER_URL', path: 'gateway.buyerUrl', parse: string },
  { variable: 'SVC_DATABASE_URL', path: 'gateway.databaseUrl', parse: string },
  { variable: 'SVC_BOOTSTRAP', path: 'network.bootstrap', parse: list },
  { variable: 'SVC_HOLE_PUNCH_PORT', path: 'network.holePunchPort', parse: integer },
  { variable: 'SVC_CHAIN', path: 'chain.network', parse: string },
  { variable: 'SVC_RPC_URL', path: 'chain.rpcUrl', parse: string },
];

/** Applies every set override variable to `raw` (a config file object). */
export function applyEnv(
  raw: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
): Record<string, unknown> {
  let out = raw;
  for (const { variable, path, parse } of ENV_OVERRIDES) {
    const text = env[variable];
    if (text === undefined || text === '') continue;
    try {
      out = setAtPath(out, path, parse(text));
    } catch (error) {
      throw new ConfigError(`environment variable ${variable}: ${(error as Error).message}`);
    }
  }
  return out;
}
