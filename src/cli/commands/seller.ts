/** `svc seller setup|start`: configure providers and run a seller node. */
import { type Command, Option } from 'commander';
import {
  PROVIDER_TYPES,
  readConfigFile,
  validateConfig,
  writeConfigFile,
} from '../../config/index.js';
import { CliContext } from '../context.js';
import { CliError, usageError } from '../errors.js';
import type { CliIo } from '../io.js';
import { parseNumberOption } from '../options.js';
import { printJson } from '../output.js';
import { waitForShutdown } from '../shutdown.js';

interface SetupFlags {
  provider: (typeof PROVIDER_TYPES)[number];
  name?: string;
  baseUrl?: string;
  apiKeyEnv?: string;
  service: string[];
  inputPrice?: string;
  outputPrice?: string;
  cachedPrice?: string;
  imagePrice?: string;
  videoPrice?: string;
  maxConcurrency?: string;
  displayName?: string;
  region?: string;
  uploadLimit?: string;
  replace?: boolean;
}

function numberFlag(text: string | undefined, flag: string): number | undefined {
  return parseNumberOption(text, flag);
}

/** `--service id` or `--service id=upstream-model`. */
function parseServices(specs: string[], demo: boolean): Record<string, { upstreamModel?: string }> {
  const list = specs.length > 0 ? specs : demo ? ['svc-demo'] : [];
  if (list.length === 0) throw usageError('name at least one --service <id>[=<upstream model>]');
  const services: Record<string, { upstreamModel?: string }> = {};
  for (const spec of list) {
    const [id, upstream] = spec.split('=', 2);
    if (!id) throw usageError(`--service "${spec}": expected <id> or <id>=<upstream model>`);
    services[id] = upstream ? { upstreamModel: upstream } : {};
  }
  return services;
}

export function registerSellerCommands(program: Command, io: CliIo): void {
  const seller = program
    .command('seller')
    .description('sell inference: configure upstream providers and run a seller node');
  registerSellerSetup(seller, io);
  registerSellerStart(seller, io);
}

/** Registers `svc seller setup`. */
function registerSellerSetup(seller: Command, io: CliIo): void {
  seller
    .command('setup')
    .description(
      'add (or with --replace, set) a provider in the seller config; the result is validated before it is written',
    )
    .addOption(
      new Option('--provider <type>', 'provider type')
        .choices(PROVIDER_TYPES)
        .makeOptionMandatory(),
    )
    .option('--name <name>', 'provider name buyers see (default: the type)')
    .option('--base-url <url>', 'upstream API root including /v1 (default: the vendor)')
    .option(
      '--api-key-env <VAR>',
      'environment variable holding the upstream key (the key is never written)',
    )
    .option(
      '--service <id[=upstream]>',
      'a service to offer, optionally with the upstream model id (repeatable)',
      (v: string, all: string[]) => [...all, v],
      [],
    )
    .option('--input-price <usd>', 'USD per million input tokens')
    .option('--output-price <usd>', 'USD per million output tokens')
    .option('--cached-price <usd>', 'USD per million cached input tokens')
    .option('--image-price <usd>', 'USD per generated image (openai-images services)')
    .option('--video-price <usd>', 'USD per delivered video (video services)')
    .option('--max-concurrency <n>', 'requests served at once by this provider')
    .option('--display-name <name>', 'seller name shown to buyers')
    .option('--region <region>', 'seller region shown to buyers')
    .option('--upload-limit <bytes>', 'largest request body accepted')
    .option('--replace', 'replace all configured providers instead of adding one')
    .addHelpText(
      'after',
      '\nExamples:\n  svc seller setup --provider demo --replace\n  svc seller setup --provider openai-chat --api-key-env OPENAI_API_KEY \\\n    --service gpt-4o-mini --input-price 0.15 --output-price 0.6 --cached-price 0.075\n  svc seller setup --provider anthropic-messages --api-key-env ANTHROPIC_API_KEY \\\n    --service claude-sonnet=claude-sonnet-4-5 --input-price 3 --output-price 15\n  svc seller setup --provider openai-images --api-key-env OPENAI_API_KEY \\\n    --service gpt-image-1 --image-price 0.04\n  svc seller setup --provider video --base-url https://video.example.com \\\n    --api-key-env VIDEO_API_KEY --service kling-2 --video-price 0.5',
    )
    .action((flags: SetupFlags, command: Command) => {
      const ctx = CliContext.of(command, io);
      const path = ctx.loadConfig().path;
      const { file } = readConfigFile(path);
      const demo = flags.provider === 'demo';
      const imageUsd = numberFlag(flags.imagePrice, '--image-price');
      const videoUsd = numberFlag(flags.videoPrice, '--video-price');
      const unitPriced = imageUsd !== undefined || videoUsd !== undefined;
      const input =
        numberFlag(flags.inputPrice, '--input-price') ?? (demo || unitPriced ? 0 : undefined);
      const output =
        numberFlag(flags.outputPrice, '--output-price') ?? (demo || unitPriced ? 0 : undefined);
      if (input === undefined || output === undefined) {
        throw new CliError(
          '--input-price and --output-price are required (USD per million tokens)',
          2,
        );
      }
      const cached = numberFlag(flags.cachedPrice, '--cached-price');
      const maxConcurrency = numberFlag(flags.maxConcurrency, '--max-concurrency');
      const provider = {
        type: flags.provider,
        ...(flags.name ? { name: flags.name } : {}),
        ...(flags.baseUrl ? { baseUrl: flags.baseUrl } : {}),
        ...(flags.apiKeyEnv ? { apiKeyEnv: flags.apiKeyEnv } : {}),
        services: Object.fromEntries(
          Object.entries(parseServices(flags.service, demo)).map(([id, service]) => [
            id,
            {
              ...service,
              ...(imageUsd !== undefined ? { imageUsd } : {}),
              ...(videoUsd !== undefined ? { videoUsd } : {}),
            },
          ]),
        ),
        defaultPricing: {
          inputUsdPerMillion: input,
          outputUsdPerMillion: output,
          ...(cached !== undefined ? { cachedInputUsdPerMillion: cached } : {}),
        },
        ...(maxConcurrency !== undefined ? { maxConcurrency } : {}),
      };
      const current = (
        typeof file.seller === 'object' && file.seller !== null ? file.seller : {}
      ) as Record<string, unknown>;
      const existing = Array.isArray(current.providers) ? (current.providers as unknown[]) : [];
      const uploadLimit = numberFlag(flags.uploadLimit, '--upload-limit');
      const next = {
        ...file,
        seller: {
          ...current,
          ...(flags.displayName ? { displayName: flags.displayName } : {}),
          ...(flags.region ? { region: flags.region } : {}),
          ...(uploadLimit !== undefined ? { uploadLimitBytes: uploadLimit } : {}),
          providers: flags.replace ? [provider] : [...existing, provider],
        },
      };
      validateConfig(next, path);
      writeConfigFile(path, next, ctx.dataDir);
      if (ctx.json) printJson(io, { path, seller: next.seller });
      else {
        io.stdout(
          `wrote ${path}: provider ${provider.name ?? provider.type} with ${Object.keys(provider.services).join(', ')}\n`,
        );
        if (flags.apiKeyEnv && !io.env[flags.apiKeyEnv]) {
          io.stdout(
            `note: ${flags.apiKeyEnv} is not set here; export it before \`svc seller start\`\n`,
          );
        }
      }
    });
}

/** Registers `svc seller start`. */
function registerSellerStart(seller: Command, io: CliIo): void {
  seller
    .command('start')
    .description(
      'run the seller node: announce offers on the network and serve requests (Ctrl-C stops it)',
    )
    .option(
      '--identity <name>',
      'identity whose key signs the offers (default: the data dir wallet)',
    )
    .option('--port <port>', 'TCP port to listen on (default: network.listen from the config)')
    .option('--bootstrap <multiaddr...>', 'bootstrap addresses (default: network.bootstrap)')
    .option(
      '--free',
      'serve priced offers without payment (development only; without it a seller with prices needs a chain)',
    )
    .addHelpText(
      'after',
      '\nUpstream keys come from the environment variables named by apiKeyEnv, never from the config file.\nPriced offers are paid through payment channels on the configured chain (`svc chain start` for a local one);\na seller with prices and no chain refuses to start unless --free is given.\n\nExamples:\n  svc seller setup --provider demo --replace && svc seller start\n  svc chain start && svc seller start          # paid offers on the local chain\n  svc seller start --free                       # priced offers served unpaid (development)\n  OPENAI_API_KEY=sk-... svc seller start --port 4002 --bootstrap /ip4/10.0.0.2/tcp/4001/p2p/16Uiu2...',
    )
    .action(
      async (
        flags: { identity?: string; port?: string; bootstrap?: string[]; free?: boolean },
        command: Command,
      ) => {
        const ctx = CliContext.of(command, io);
        const { config } = ctx.loadConfig();
        const port = numberFlag(flags.port, '--port');
        const network = {
          ...config.network,
          ...(port !== undefined ? { listen: [`/ip4/0.0.0.0/tcp/${port}`] } : {}),
          ...(flags.bootstrap ? { bootstrap: flags.bootstrap } : {}),
        };
        const identities = await ctx.identities();
        const identity = flags.identity
          ? identities.load(flags.identity)
          : identities.loadDefault();
        const [{ describeReachability, formatReachability }, { configuredChain, startPaidSeller }] =
          await Promise.all([import('../../network/index.js'), import('../../node/index.js')]);
        const chain = configuredChain(config.chain, ctx.dataDir);
        const handle = await startPaidSeller({
          identity,
          seller: config.seller,
          network,
          env: io.env,
          logger: ctx.logger,
          dataDir: ctx.dataDir,
          chain: chain.contract,
          ...(chain.problem ? { chainProblem: chain.problem } : {}),
          paymentsConfig: config.chain.payments,
          ...(flags.free ? { free: true } : {}),
        });
        const metadata = handle.metadata();
        if (ctx.json) {
          printJson(io, {
            peerId: handle.node.peerId,
            multiaddrs: handle.node.multiaddrs(),
            metadata,
          });
        } else {
          io.stdout(`seller ${handle.node.peerId} (${metadata.displayName}) running\n`);
          const paid = metadata.capabilities.payments;
          io.stdout(
            paid
              ? `  paid on chain ${paid.chainId} at ${paid.paymentsContract}\n`
              : '  payments: none (free offers only, or --free)\n',
          );
          for (const address of handle.node.multiaddrs()) io.stdout(`  ${address}\n`);
          if (network.listen.includes('/p2p-circuit')) {
            // Behind NAT: say once the relay reservation lands (docs/guide/selling.md "Selling from behind NAT").
            const libp2p = handle.node.libp2p;
            const onUpdate = () => {
              const reachability = describeReachability(libp2p);
              if (reachability.mode !== 'relayed') return;
              libp2p.removeEventListener('self:peer:update', onUpdate);
              io.stdout(`  reachable: ${formatReachability(reachability)}\n`);
            };
            libp2p.addEventListener('self:peer:update', onUpdate);
            onUpdate();
          }
          for (const provider of metadata.providers) {
            io.stdout(
              `  ${provider.provider}: ${provider.services.join(', ')} (max ${provider.maxConcurrency} at once)\n`,
            );
          }
          if (network.bootstrap.length === 0) {
            io.stdout(
              'note: network.bootstrap is empty; buyers must bootstrap from this node to find it\n',
            );
          }
          io.stdout('press Ctrl-C to stop\n');
        }
        await waitForShutdown();
        await handle.stop();
        if (!ctx.json) io.stdout('seller stopped\n');
      },
    );
}
