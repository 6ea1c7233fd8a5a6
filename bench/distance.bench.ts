/**
 * Distance (`npm run bench -- distance`): a seller far from its buyer. A userspace relay
 * (bench/delayRelay.ts) adds a set one-way delay between the buyer and the seller, and charges a
 * new connection TCP's handshake round trip; the seller announces the relay's address. For each
 * delay, a streamed chat request through the real buyer (HTTP in, routing, libp2p to the seller,
 * the seller to a local fake upstream) is timed to its first token and to its last byte:
 *
 * - warm: on an open connection;
 * - new connection: the first request to a seller after its connection was closed (a seller
 *   never dialled for a request takes the same path: the dial happens inside the request);
 * - after restart: the seller stopped (requests meanwhile fail over to nothing: 502), started
 *   again with the same identity at the same address; how long until the buyer lists it again on
 *   its own, and the first request then.
 *
 * The physical floor is the same request sent straight to the upstream from the seller's side
 * plus one RTT. With no delay the figures are the local cost alone (new connection − warm = the
 * local set-up; also over warm requests sent after the same pause, since code run after a pause
 * runs slower). "RTTs" = (time at the delay − time with none) / RTT, against the nominal RTT and
 * the one measured through the relay (an echo's round trip at the delay − at no delay, p50). The
 * goals are also read on requests at the delay and with none taken in turns, which share
 * whatever the machine does meanwhile (bench/distanceTurns.ts,
 * docs/decisions/222-distance-goals-read-in-turns.md). A warm request's time is split by the
 * relay's record (bench/distanceWarm.ts), and measured again at 2 ms each way, where the
 * processes wait on the network too (docs/decisions/214-a-warm-request-at-distance.md). The
 * relay runs in a worker thread (bench/delayRelay.ts); buyer and seller share this process, so
 * its CPU time per request (new connection − warm) is the set-up's CPU at both ends
 * (docs/decisions/210-a-new-connection-with-an-honest-distance.md).
 */
import { performance } from 'node:perf_hooks';
import { multiaddr } from '@multiformats/multiaddr';
import { runBuyerNode } from '../src/buyer/runBuyerNode.js';
import { scoreAll } from '../src/buyer/testing/testBuyer.js';
import { defaultConfig } from '../src/config/index.js';
import { freePort } from '../src/devnet/index.js';
import { silentLogger } from '../src/log/index.js';
import type { SvcNode } from '../src/network/index.js';
import {
  loopbackNetworkConfig,
  randomIdentity,
  startLoopbackNode,
} from '../src/network/testing/loopback.js';
import { startFakeUpstream } from '../src/seller/testing/index.js';
import { tempDir } from '../src/testing/index.js';
import { startDelayRelay } from './delayRelay.js';
import { directSetUp, printNoRelay } from './distanceDirect.js';
import { cutConnection, farSeller, listed, settled } from './distanceSeller.js';
import { interleavedNewConnection, interleavedWarm, printInTurns } from './distanceTurns.js';
import {
  figures,
  grownLine,
  IDLE_DELAY_MS,
  MODEL,
  type Timing,
  timed,
  WARM_SAMPLES,
  type WarmSplit,
  warmRun,
} from './distanceWarm.js';
import { printFigure, type Stats, stats } from './lib.js';

/** The first pass warms the code paths up and is not reported. */
const DELAYS_MS = (process.env.SVC_DISTANCE_DELAYS ?? '0,0,20').split(',').map(Number);
/**
 * 20, not 10: the local set-up (new connection − warm) is a difference of two p50s, and with 10
 * samples its p50 moved by ±5 ms between runs on a loaded machine (decision 210).
 */
const COLD_SAMPLES = 20;
const RESTARTS = 3;
export default async function distanceBench(): Promise<Record<string, unknown>> {
  const stops: (() => Promise<unknown>)[] = [];
  try {
    const upstream = await startFakeUpstream({ text: 'the quick brown fox jumps over it' });
    stops.unshift(() => upstream.close());
    const bootstrap: SvcNode = await startLoopbackNode('bootstrap');
    stops.unshift(() => bootstrap.stop());
    const bootstrapAddress = bootstrap.multiaddrs()[0]!;
    const sellerPort = await freePort();
    const relay = await startDelayRelay(sellerPort);
    stops.unshift(() => relay.close());
    const relayAddress = multiaddr(`/ip4/127.0.0.1/tcp/${relay.port}`);
    const far = farSeller(randomIdentity(), sellerPort, relay, bootstrapAddress, upstream);
    await far.start();
    stops.unshift(() => far.seller.stop());
    const config = defaultConfig();
    const buyer = await runBuyerNode({
      config: {
        ...config,
        network: loopbackNetworkConfig({ bootstrap: [bootstrapAddress] }),
        buyer: { ...config.buyer, audit: { ...config.buyer.audit, enabled: false } },
      },
      dataDir: tempDir('svc-bench-distance-'),
      identity: randomIdentity(),
      logger: silentLogger(),
      port: 0,
      payments: 'unpaid-dev',
      reputation: scoreAll(80),
    });
    stops.unshift(() => buyer.stop());
    const sellerId = far.seller.node.peerId;
    const sellerLibp2p = () => far.seller.node.libp2pPeerId;
    await listed(buyer, sellerId);
    const chat = `${buyer.url}/v1/chat/completions`;
    const viaRelay = () =>
      buyer.node.libp2p
        .getConnections(sellerLibp2p())
        .every((c) => c.remoteAddr.toString().includes(`/tcp/${relay.port}`));

    const inTurns = {
      relay,
      buyer,
      sellerId,
      seller: sellerLibp2p,
      url: chat,
      samples: COLD_SAMPLES,
    };
    const table: Record<string, unknown>[] = [];
    /** Last-byte p50 per case with no delay: the local cost, taken out to count round trips. */
    let local: Record<string, number> | undefined;
    /** The relay's echo round trip p50 with no delay: what the relay costs when it adds none. */
    let localEchoMs: number | undefined;
    /** The same with the echo in this thread, woken as the seller is by a request. */
    let localEchoHereMs: number | undefined;
    /** The warm split with no delay (bench/distanceWarm.ts). */
    let localSplit: WarmSplit | undefined;
    for (const [pass, delayMs] of DELAYS_MS.entries()) {
      const rtt = 2 * delayMs;
      const direct: Timing[] = [];
      for (let i = 0; i < WARM_SAMPLES; i++)
        direct.push(await timed(`${upstream.baseUrl}/chat/completions`));
      const floor = figures(direct);
      // The same, each after a wait of one RTT, as the seller's call to its upstream is at this
      // distance: code that is not svc's, run cold after a wait (bench/distanceWarm.ts).
      const afterWait: Timing[] = [];
      for (let i = 0; rtt > 0 && i < WARM_SAMPLES; i++) {
        await new Promise((resolve) => setTimeout(resolve, rtt));
        afterWait.push(await timed(`${upstream.baseUrl}/chat/completions`));
      }
      const floorAfterWait = rtt > 0 ? figures(afterWait) : undefined;
      // A connection opened at this delay, then warm requests on it; at a distance, warm ones at
      // the waiting reference's delay right after, on the same connection.
      await relay.setDelay(delayMs);
      await cutConnection(buyer, sellerLibp2p());
      await timed(chat);
      const { echo, echoHere, warm, split } = await warmRun(relay, delayMs, chat);
      const waiting = rtt > 0 ? await warmRun(relay, IDLE_DELAY_MS, chat) : undefined;
      const turns = rtt > 0 ? await interleavedWarm(relay, delayMs, chat) : undefined;
      const newTurns = rtt > 0 ? await interleavedNewConnection(inTurns, delayMs) : undefined;
      await relay.setDelay(delayMs);
      if (rtt === 0) {
        localEchoMs = echo.p50Ms;
        localEchoHereMs = echoHere.p50Ms;
        localSplit = split;
      }
      const measuredRtt = echo.p50Ms - (localEchoMs ?? 0);
      const wokenRtt = echoHere.p50Ms - (localEchoHereMs ?? 0);
      const cold: Timing[] = [];
      /** Warm requests each sent after the pause a new connection's request follows. */
      const warmAfterPause: Timing[] = [];
      for (let i = 0; i < COLD_SAMPLES; i++) {
        await settled(buyer, sellerId);
        await cutConnection(buyer, sellerLibp2p());
        // Both ends have seen the close before the next dial.
        await new Promise((resolve) => setTimeout(resolve, 2 * rtt + 20));
        cold.push(await timed(chat));
        // The same pause, then a request on the connection just made: what a request costs
        // when the processes have idled as long, without a connection to set up.
        await new Promise((resolve) => setTimeout(resolve, 2 * rtt + 20));
        warmAfterPause.push(await timed(chat));
      }
      // Where a new connection's time goes: the dial alone, a request right after it (beside
      // what every new connection sets off: identify both ways, DHT and peer store updates), and
      // one a moment later on the same connection.
      const dials: number[] = [];
      const rightAfter: number[] = [];
      const aMomentLater: number[] = [];
      for (let i = 0; i < COLD_SAMPLES; i++) {
        await settled(buyer, sellerId);
        await cutConnection(buyer, sellerLibp2p());
        await new Promise((resolve) => setTimeout(resolve, 2 * rtt + 20));
        // As a request dials: by the route's address, through the transport manager
        // (docs/decisions/216-a-dial-by-route.md); libp2p's dial only where that path declines.
        const start = performance.now();
        const byRoute = buyer.node.libp2p.services.routeDialer.dial(
          sellerLibp2p(),
          [relayAddress],
          AbortSignal.timeout(10_000),
        );
        if (byRoute === undefined) throw new Error('the route dialer declined the relay address');
        await byRoute;
        dials.push(performance.now() - start);
        rightAfter.push((await timed(chat)).lastByteMs);
        await new Promise((resolve) => setTimeout(resolve, 300));
        aMomentLater.push((await timed(chat)).lastByteMs);
      }
      const setUp = {
        dial: stats(dials),
        requestRightAfterDial: stats(rightAfter),
        requestAMomentLater: stats(aMomentLater),
      };
      const relayed = viaRelay();
      const restart: Timing[] = [];
      const listedAfterMs: number[] = [];
      for (let i = 0; i < RESTARTS; i++) {
        await far.seller.stop();
        for (let j = 0; j < 3; j++) {
          const down = await timed(chat);
          if (down.status !== 502) throw new Error(`a request to a stopped seller: ${down.status}`);
        }
        await far.start();
        const started = performance.now();
        await listed(buyer, sellerId);
        listedAfterMs.push(performance.now() - started);
        restart.push(await timed(chat));
      }
      const noRelay =
        rtt === 0
          ? await directSetUp({
              buyer,
              sellerId,
              seller: sellerLibp2p(),
              address: multiaddr(`/ip4/127.0.0.1/tcp/${sellerPort}`),
              chat,
              samples: COLD_SAMPLES,
              pauseMs: 20,
            })
          : undefined;
      const cases = {
        straightToUpstream: floor,
        warm: figures(warm),
        newConnection: figures(cold),
        afterRestart: figures(restart),
      };
      const rtts = (name: keyof typeof cases, per = rtt) =>
        rtt === 0 || local === undefined
          ? null
          : (cases[name].lastByte.p50Ms - (local[name] ?? 0)) / per;
      if (rtt === 0)
        local = Object.fromEntries(
          Object.entries(cases).map(([name, figure]) => [name, figure.lastByte.p50Ms]),
        );
      const row = {
        delayMs,
        rttMs: rtt,
        echoThroughRelay: echo,
        echoWokenHere: echoHere,
        measuredRttMs: measuredRtt,
        wokenRttMs: wokenRtt,
        warmSplit: split,
        ...(floorAfterWait ? { straightToUpstreamAfterOneRttWait: floorAfterWait } : {}),
        ...(waiting
          ? {
              waitingReference: {
                delayMs: IDLE_DELAY_MS,
                echoThroughRelay: waiting.echo,
                warm: figures(waiting.warm),
                warmSplit: waiting.split,
              },
            }
          : {}),
        relayed,
        ...(turns ? { warmInTurnsWithNoDelay: turns } : {}),
        ...(newTurns ? { newConnectionInTurnsWithNoDelay: newTurns } : {}),
        ...cases,
        warmAfterPause: figures(warmAfterPause),
        listedAfterRestartMs: stats(listedAfterMs),
        setUp,
        ...(noRelay ? { setUpWithNoRelay: noRelay } : {}),
        addedOverUpstreamP50Ms: {
          warm: cases.warm.lastByte.p50Ms - floor.lastByte.p50Ms,
          newConnection: cases.newConnection.lastByte.p50Ms - floor.lastByte.p50Ms,
          afterRestart: cases.afterRestart.lastByte.p50Ms - floor.lastByte.p50Ms,
        },
        rtts: {
          warm: rtts('warm'),
          newConnection: rtts('newConnection'),
          afterRestart: rtts('afterRestart'),
        },
        measuredRtts: {
          warm: rtts('warm', measuredRtt),
          newConnection: rtts('newConnection', measuredRtt),
          afterRestart: rtts('afterRestart', measuredRtt),
        },
      };
      if (pass === 0) continue;
      table.push(row);
      console.log(
        `-- one-way delay ${delayMs} ms (RTT ${rtt} ms, measured ${measuredRtt.toFixed(2)} ms: ` +
          `echo through the relay p50 ${echo.p50Ms.toFixed(2)} ms), through the relay: ${relayed}`,
      );
      for (const [name, figure] of Object.entries(cases)) {
        const key = name as keyof typeof cases;
        console.log(
          `${name.padEnd(20)} first token p50 ${figure.firstToken.p50Ms.toFixed(1).padStart(7)} ms` +
            `  last byte p50 ${figure.lastByte.p50Ms.toFixed(1).padStart(7)} ms` +
            (name === 'straightToUpstream'
              ? ''
              : `  +${(figure.lastByte.p50Ms - floor.lastByte.p50Ms).toFixed(1)} ms` +
                (rtt
                  ? `  (${rtts(key)?.toFixed(2)} RTT nominal, ` +
                    `${rtts(key, measuredRtt)?.toFixed(2)} measured, over the local cost)`
                  : '')),
        );
      }
      const p50 = (figure: Stats) => figure.p50Ms.toFixed(2);
      console.log(
        `warm split p50: buyer before the wire ${p50(split.buyerBefore)} ms, seller ` +
          `${p50(split.seller)} ms, buyer after the wire ${p50(split.buyerAfter)} ms, relay late ` +
          `${p50(split.relayLate)} ms (${split.split} of ${warm.length} split); echo woken in ` +
          `this thread p50 ${p50(echoHere)} ms (RTT ${wokenRtt.toFixed(2)} ms)`,
      );
      if (rtt > 0 && local !== undefined) {
        // The goals in milliseconds: what a case adds over its local cost beyond its round trips.
        const beyond = (name: 'warm' | 'newConnection', trips: number) =>
          cases[name].lastByte.p50Ms - (local?.[name] ?? 0) - trips * measuredRtt;
        printFigure('warm: added beyond 1 measured RTT', beyond('warm', 1), 'ms', '<= 1 ms');
        printFigure(
          'warm: added beyond 1 RTT woken in this thread',
          cases.warm.lastByte.p50Ms - (local.warm ?? 0) - wokenRtt,
          'ms',
        );
        if (waiting !== undefined) {
          // Both sides of the difference wait on the network: what is left is the distance's.
          const wait = figures(waiting.warm).lastByte.p50Ms;
          printFigure(
            `warm: added beyond 1 RTT over warm at ${IDLE_DELAY_MS} ms each way`,
            cases.warm.lastByte.p50Ms - wait - (echo.p50Ms - waiting.echo.p50Ms),
            'ms',
            '<= 1 ms',
          );
          console.log(
            `warm at ${IDLE_DELAY_MS} ms each way: last byte p50 ${wait.toFixed(1)} ms, echo p50 ` +
              `${waiting.echo.p50Ms.toFixed(2)} ms; its split p50 beyond no delay: ` +
              grownLine(waiting.split, localSplit),
          );
        }
        if (turns !== undefined) printInTurns('warm', turns, 1, measuredRtt);
        console.log(`warm split p50 beyond no delay: ${grownLine(split, localSplit)}`);
        printFigure(
          'new connection: added beyond 3 measured RTT',
          beyond('newConnection', 3),
          'ms',
          '<= 1 ms',
        );
        if (newTurns !== undefined) printInTurns('new connection', newTurns, 3, measuredRtt);
      }
      if (floorAfterWait !== undefined) {
        printFigure(
          'straight to the upstream, each after waiting one RTT, p50',
          floorAfterWait.lastByte.p50Ms,
          'ms',
        );
      }
      printFigure('listed again after restart p50', stats(listedAfterMs).p50Ms, 'ms', '<= 1000 ms');
      printFigure('dial alone p50', setUp.dial.p50Ms, 'ms');
      printFigure('request right after the dial p50', setUp.requestRightAfterDial.p50Ms, 'ms');
      printFigure('request 300 ms after the dial p50', setUp.requestAMomentLater.p50Ms, 'ms');
      if (delayMs === 0) {
        printFigure(
          'new connection local set-up p50',
          cases.newConnection.lastByte.p50Ms - cases.warm.lastByte.p50Ms,
          'ms',
          '<= 10 ms',
        );
        printFigure(
          'new connection local set-up CPU p50 (both ends)',
          cases.newConnection.cpu.p50Ms - cases.warm.cpu.p50Ms,
          'ms',
        );
        // The warm reference above is sent back to back; a new connection's request follows a
        // pause, and code run after a pause runs slower (docs/decisions/214-a-warm-request-at-distance.md).
        const paused = figures(warmAfterPause);
        printFigure('warm after the same pause p50', paused.lastByte.p50Ms, 'ms');
        printFigure(
          'new connection local set-up over warm after the same pause p50',
          cases.newConnection.lastByte.p50Ms - paused.lastByte.p50Ms,
          'ms',
        );
        printFigure(
          'the same, CPU p50 (both ends)',
          cases.newConnection.cpu.p50Ms - paused.cpu.p50Ms,
          'ms',
        );
      }
      if (noRelay !== undefined) printNoRelay(noRelay);
    }
    return { model: MODEL, table };
  } finally {
    for (const stop of stops) await stop().catch(() => undefined);
  }
}
