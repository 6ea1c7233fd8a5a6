// scratch harness (not committed): buyer + seller + fake upstream in one process, N sequential requests
import { performance } from 'node:perf_hooks';
import { request } from 'undici';
import { runBuyerNode } from '../src/buyer/runBuyerNode.js';
import { scoreAll } from '../src/buyer/testing/testBuyer.js';
import { defaultConfig } from '../src/config/index.js';
import { silentLogger } from '../src/log/index.js';
import { loopbackNetworkConfig, randomIdentity, startLoopbackNode, waitFor } from '../src/network/testing/loopback.js';
import { startSeller } from '../src/seller/index.js';
import { startFakeUpstream } from '../src/seller/testing/index.js';
import { tempDir } from '../src/testing/index.js';

const N = Number(process.env.N ?? 2000);
const STREAM = process.env.STREAM === '1';
const upstream = await startFakeUpstream({ text: 'the quick brown fox jumps over the lazy dog '.repeat(20) });
const bootstrap = await startLoopbackNode('bootstrap');
const b = bootstrap.multiaddrs()[0]!;
const seller = await startSeller({
  identity: randomIdentity(),
  network: loopbackNetworkConfig({ bootstrap: [b] }),
  seller: { displayName: 's', uploadLimitBytes: 1 << 20, providers: [{ type: 'openai-chat', baseUrl: upstream.baseUrl, services: { m: { categories: [] } }, defaultPricing: { inputUsdPerMillion: 0, outputUsdPerMillion: 0 }, maxConcurrency: 64 }] },
});
const config = defaultConfig();
const buyer = await runBuyerNode({
  config: { ...config, network: loopbackNetworkConfig({ bootstrap: [b] }) },
  dataDir: tempDir('onep-'), identity: randomIdentity(), logger: silentLogger(), port: 0, payments: 'unpaid-dev', reputation: scoreAll(80),
});
await waitFor(async () => {
  const r = (await (await fetch(`${buyer.url}/_svc/peers`)).json()) as { peers: { reachable: boolean }[] };
  return r.peers.some((p) => p.reachable);
}, 30000, 'listed');
const words = 'alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu'.split(' ');
const times: number[] = [];
for (let i = 0; i < N; i++) {
  const content = Array.from({ length: 150 + (i % 200) }, (_, j) => words[(i * 7 + j * 3) % words.length]).join(' ') + ` #${i}`;
  const t = performance.now();
  const r = await request(`${buyer.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', stream: STREAM, messages: [{ role: 'user', content }] }) });
  await r.body.text();
  if (r.statusCode !== 200) throw new Error(String(r.statusCode));
  times.push(performance.now() - t);
}
const direct: number[] = [];
for (let i = 0; i < 300; i++) {
  const t = performance.now();
  const r = await request(`${upstream.baseUrl}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', stream: STREAM, messages: [{ role: 'user', content: 'x '.repeat(300) }] }) });
  await r.body.text();
  direct.push(performance.now() - t);
}
const p = (a: number[], q: number) => [...a].sort((x, y) => x - y)[Math.floor(a.length * q)]!;
const late = times.slice(Math.floor(N / 4));
console.log(`svc p50 ${p(late, 0.5).toFixed(2)} p90 ${p(late, 0.9).toFixed(2)}; direct p50 ${p(direct, 0.5).toFixed(2)}; cpu ${(process.cpuUsage().user + process.cpuUsage().system) / 1000 | 0} ms`);
await buyer.stop(); await seller.stop(); await bootstrap.stop(); await upstream.close();
process.exit(0);
