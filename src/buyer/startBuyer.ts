/** Starts the local buyer proxy on 127.0.0.1: `startBuyer(...)` -> `{ url, stop() }`. */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sendThroughProxy } from '../audit/index.js';
import { NO_REPUTATION, type ReputationSource } from '../catalog/index.js';
import type { BuyerConfig } from '../config/index.js';
import { SvcError } from '../errors/index.js';
import { API_INGRESS, boundIngress } from '../http/index.js';
import type { Logger } from '../log/index.js';
import type { PeerDirectory, PeerTransport } from '../network/index.js';
import { BuyerService } from './BuyerService.js';
import { closeOpenRecords } from './closeOpenRecords.js';
import { formatsTranslator } from './formatsTranslator.js';
import { isLoopbackHost } from './http.js';
import { type BuyerPayments, NO_PAYMENTS, UNPAID_DEV_PAYMENTS } from './payments.js';
import { createHandler } from './server.js';
import type { Translator } from './translator.js';

export interface StartBuyerOptions {
  config: BuyerConfig;
  dataDir: string;
  directory: PeerDirectory;
  transport: PeerTransport;
  /**
   * Pays sellers. Default: free offers only (paid ones answer 402 `insufficient_deposits`).
   * `'unpaid-dev'` sends paid requests with no payment (development against the demo network).
   */
  payments?: BuyerPayments | 'unpaid-dev';
  reputation?: ReputationSource;
  /** Format translation; default: src/formats (pass-through when the seller speaks the client's format). */
  translator?: Translator;
  logger: Logger;
  clock?: () => number;
  /** Payment channels for `GET /_svc/channels`; default: none. */
  channels?: () => unknown[] | Promise<unknown[]>;
  /** Overrides config.port (0 picks a free port). */
  port?: number;
  version?: string;
}

export interface RunningBuyer {
  url: string;
  port: number;
  service: BuyerService;
  stop(): Promise<void>;
}

/** Closes what a buyer service opened in its data directory. */
function closeStores(service: BuyerService): void {
  service.auditStore.close();
  service.records.close();
  service.responses.close();
  service.state.close();
  service.controlSecret.close();
}

/** A port already in use, said with what is likely holding it and what to do; else `error`. */
function portTaken(error: NodeJS.ErrnoException, port: number): Error {
  if (error.code !== 'EADDRINUSE') return error;
  return new SvcError('invalid_config', {
    message: `127.0.0.1:${port} is in use: another buyer (svc buyer start) or gateway (svc gateway start, which runs one) may be running there. Choose another port (--port; --buyer-port for the gateway), or have the gateway forward to that buyer with --buyer-url http://127.0.0.1:${port}.`,
    cause: error,
  });
}

/** Starts the buyer; refuses any host that is not loopback. */
export async function startBuyer(options: StartBuyerOptions): Promise<RunningBuyer> {
  const host = options.config.host;
  if (!isLoopbackHost(host)) {
    throw new SvcError('invalid_config', {
      message: `The buyer listens on loopback only (it checks no API keys); "${host}" is not allowed.`,
    });
  }
  const payments =
    options.payments === 'unpaid-dev' ? UNPAID_DEV_PAYMENTS : (options.payments ?? NO_PAYMENTS);
  const service = new BuyerService({
    config: options.config,
    dataDir: options.dataDir,
    directory: options.directory,
    transport: options.transport,
    payments,
    reputation: options.reputation ?? NO_REPUTATION,
    translator: options.translator ?? formatsTranslator,
    logger: options.logger,
    clock: options.clock ?? Date.now,
    version: options.version ?? '0.0.0',
    channels: options.channels ?? (() => []),
  });
  // Before serving: what a stopped run left in flight is closed, its delivered streams paid.
  await closeOpenRecords(service.records, payments, options.logger);
  let url = '';
  // A slow client holds a slot at most this long (docs/guide/buyer.md "The buyer proxy"): headers within 30 s,
  // the whole request (body included, not the answer) within 120 s.
  const server = boundIngress(createServer(createHandler(service, () => url)), {
    ...API_INGRESS,
    keepAliveTimeoutMs: 5_000,
  });
  const port = options.port ?? options.config.port;
  await new Promise<void>((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) => {
      // Nothing served: the stores opened for this run are closed before the error travels.
      closeStores(service);
      reject(portTaken(error, port));
    };
    server.once('error', failed);
    server.listen(port, host === 'localhost' ? '127.0.0.1' : host, () => {
      server.off('error', failed);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const hostPart = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  url = `http://${hostPart}:${address.port}`;
  // Audits go through this same server, so they take the one send path (src/audit/ask.ts).
  service.audits.start(
    sendThroughProxy({
      baseUrl: () => url,
      marker: service.audits.marker,
      controlSecret: () => service.controlSecret.current()?.toString(),
      evidenceOf: (requestId) => service.evidence.take(requestId),
    }),
  );
  return {
    url,
    port: address.port,
    service,
    stop: async () => {
      await service.audits.stop();
      await new Promise<void>((resolve) => {
        server.close(() => {
          closeStores(service);
          resolve();
        });
        server.closeAllConnections();
      });
    },
  };
}
