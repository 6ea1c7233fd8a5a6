import { blackHole, dataDir, peerCacheFile } from './buyer-rss.bench.js';
const hole = await blackHole();
const json = await peerCacheFile(1000, hole.port);
const dir = dataDir('/work/scratch2/heap', 'buyer', json);
console.log(dir, hole.port);
await new Promise(() => {});
