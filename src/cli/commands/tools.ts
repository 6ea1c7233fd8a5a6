/**
 * `svc claude`, `svc codex`, `svc opencode` (spec 4.4): launch a coding tool pointed at the
 * running buyer, or at a gateway with a key (`--svc-gateway <url> --svc-key-env <VAR>`). The
 * arguments after the command are the tool's, all of them (`--version`, `--json`, `--help`
 * included); only options starting with `--svc-` are svc's. Signals are forwarded to the tool and
 * its exit status is svc's (docs/decisions/126-coding-tool-launchers.md).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { constants, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { resolveDataDir } from '../../config/index.js';
import { CliContext, type GlobalOptions } from '../context.js';
import { CliError } from '../errors.js';
import type { CliIo } from '../io.js';
import { bestAgentModel, type CatalogModel, fastAgentModel, textModelsOf } from './toolModel.js';
import { namesModel, TOOLS, type ToolName, type ToolSpec, type ToolTarget } from './toolSetup.js';

export { TOOLS } from './toolSetup.js';

/** The placeholder key the tools send to the buyer, which checks no keys (spec 5). */
const PLACEHOLDER_KEY = 'svc-local';
/** Variable the launcher sets to the placeholder for tools that read their key from one. */
const PLACEHOLDER_KEY_ENV = 'SVC_LOCAL_KEY';
/** Where a gateway key is read from unless `--svc-key-env` names another variable. */
const DEFAULT_KEY_ENV = 'SVC_API_KEY';

export function isToolName(word: string | undefined): word is ToolName {
  return word !== undefined && Object.hasOwn(TOOLS, word);
}

interface LauncherArgs {
  help: boolean;
  gateway: string | undefined;
  keyEnv: string | undefined;
  toolArgs: string[];
}

/** Takes svc's `--svc-*` options out of the tool's arguments; everything else stays, in order. */
export function splitLauncherArgs(args: readonly string[]): LauncherArgs {
  const out: LauncherArgs = { help: false, gateway: undefined, keyEnv: undefined, toolArgs: [] };
  // `svc claude -- --help` (the old way to reach the tool's own options) still works.
  const rest = args[0] === '--' ? args.slice(1) : [...args];
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    const [name, inline] = arg.startsWith('--svc-') ? arg.split(/=(.*)/s, 2) : [arg, undefined];
    const value = () => {
      const given = inline ?? rest[++i];
      if (given === undefined || given === '') throw new CliError(`${name} needs a value`, 2);
      return given;
    };
    if (name === '--svc-help') out.help = true;
    else if (name === '--svc-gateway') out.gateway = value();
    else if (name === '--svc-key-env') out.keyEnv = value();
    else if (name?.startsWith('--svc-')) throw new CliError(`unknown option ${name}`, 2);
    else out.toolArgs.push(arg);
  }
  return out;
}

/** The root options before the tool word, and the words after it. */
function splitArgv(argv: readonly string[]): {
  options: GlobalOptions;
  tool: string;
  rest: string[];
} {
  const options: GlobalOptions = {};
  for (let i = 0; i < argv.length; i++) {
    const [name, inline] = argv[i]!.split(/=(.*)/s, 2);
    const value = () => inline ?? argv[++i];
    if (name === '--data-dir') options.dataDir = value();
    else if (name === '--config') options.config = value();
    else if (name === '--log-level') options.logLevel = value() as GlobalOptions['logLevel'];
    else if (name === '--json') options.json = true;
    else return { options, tool: argv[i]!, rest: argv.slice(i + 1) };
  }
  return { options, tool: '', rest: [] };
}

function helpText(name: ToolName): string {
  const tool = TOOLS[name];
  return [
    `Usage: svc ${name} [--svc-gateway <url> [--svc-key-env <VAR>]] [${tool.bin} arguments...]`,
    '',
    `Launch ${tool.description} against the running buyer (or a gateway). Every argument except`,
    `the --svc-* options below reaches ${tool.bin} unchanged; its exit status is svc's.`,
    '',
    'Options:',
    '  --svc-gateway <url>   use this gateway instead of the local buyer (a key is required)',
    `  --svc-key-env <VAR>   environment variable holding the gateway key (default ${DEFAULT_KEY_ENV})`,
    '  --svc-help            show this help',
    '',
    'Without a model option, the tool uses the default route (`svc buyer route set`), else the',
    'best text model on the network that offers tool use (named on stderr).',
    '',
    'Examples:',
    `  svc ${name}`,
    `  svc ${name} --version`,
    `  SVC_API_KEY=svc_... svc ${name} --svc-gateway http://127.0.0.1:8379`,
    '',
  ].join('\n');
}

async function getJson(url: string, key: string): Promise<{ status: number; body: unknown }> {
  try {
    const response = await fetch(url, {
      headers: { authorization: `Bearer ${key}` },
      signal: AbortSignal.timeout(5000),
    });
    return { status: response.status, body: await response.json().catch(() => null) };
  } catch {
    return { status: 0, body: null };
  }
}

function errorMessageOf(body: unknown): string {
  const message = (body as { error?: { message?: unknown } } | null)?.error?.message;
  return typeof message === 'string' ? message : 'no message';
}

/** Where the tool goes, with which key, and the network's text models. */
async function resolveTarget(
  ctx: CliContext,
  launcher: LauncherArgs,
): Promise<{
  baseUrl: string;
  keyEnv: string;
  key: string;
  models: CatalogModel[];
  route?: string;
}> {
  if (launcher.gateway !== undefined) {
    const baseUrl = launcher.gateway.replace(/\/+$/, '').replace(/\/v1$/, '');
    const keyEnv = launcher.keyEnv ?? DEFAULT_KEY_ENV;
    const key = ctx.io.env[keyEnv];
    if (!key) {
      throw new CliError(
        `set ${keyEnv} to your gateway key (svc_...) or name the variable holding it with --svc-key-env`,
      );
    }
    const { status, body } = await getJson(`${baseUrl}/v1/models`, key);
    if (status === 0) throw new CliError(`no gateway answers at ${baseUrl}`);
    if (status !== 200) {
      throw new CliError(
        `the gateway at ${baseUrl} refused the key in ${keyEnv}: ${errorMessageOf(body)}`,
      );
    }
    return { baseUrl, keyEnv, key, models: textModelsOf(body) };
  }
  const { config } = ctx.loadConfig();
  const baseUrl = `http://127.0.0.1:${config.buyer.port}`;
  const { status, body } = await getJson(`${baseUrl}/v1/models`, PLACEHOLDER_KEY);
  if (status !== 200) {
    throw new CliError(
      `no buyer answers at ${baseUrl}: start one with \`svc buyer start\` (or \`svc up\`) first`,
    );
  }
  const { RouteStateStore } = await import('../../routing/index.js');
  const route = new RouteStateStore(ctx.dataDir).read().defaultRoute;
  return {
    baseUrl,
    keyEnv: PLACEHOLDER_KEY_ENV,
    key: PLACEHOLDER_KEY,
    models: textModelsOf(body),
    ...(route ? { route } : {}),
  };
}

/** Runs the tool with the terminal; forwards signals; resolves with its exit status. */
function runTool(tool: ToolSpec, args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve, reject) => {
    // Through `npm run svc -- …` the working directory is the checkout; the user's is INIT_CWD.
    const cwd = env.npm_lifecycle_event && env.INIT_CWD ? env.INIT_CWD : process.cwd();
    // PWD too: some tools (opencode) take their project directory from it.
    const child = spawn(tool.bin, args, { stdio: 'inherit', env: { ...env, PWD: cwd }, cwd });
    const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'];
    const forward = (signal: NodeJS.Signals) => child.kill(signal);
    for (const signal of signals) process.on(signal, forward);
    const done = () => {
      for (const signal of signals) process.off(signal, forward);
    };
    child.once('error', (error: NodeJS.ErrnoException) => {
      done();
      reject(
        error.code === 'ENOENT'
          ? new CliError(
              `${tool.bin} is not installed or not on PATH (install it with \`${tool.install}\`)`,
            )
          : error,
      );
    });
    child.once('exit', (code, signal) => {
      done();
      // A tool killed by a signal exits as a shell reports it: 128 + the signal's number.
      resolve(code ?? 128 + (signal ? (constants.signals[signal] ?? 1) : 1));
    });
  });
}

/** `svc [root options] <tool> [args...]`: resolves with the tool's exit status. */
export async function launchTool(argv: readonly string[], io: CliIo): Promise<number> {
  const { options, tool: name, rest } = splitArgv(argv);
  if (!isToolName(name)) throw new CliError(`unknown tool ${name}`, 2);
  const tool = TOOLS[name];
  const launcher = splitLauncherArgs(rest);
  if (launcher.help) {
    io.stdout(helpText(name));
    return 0;
  }
  // Typed without a data directory while `svc up` runs: the local network's buyer (decision 127).
  const devDir =
    options.dataDir === undefined && io.env.SVC_DATA_DIR === undefined
      ? (await import('../../devnet/index.js')).runningDevBuyerDir(
          resolveDataDir(undefined, io.env),
        )
      : undefined;
  const ctx = new CliContext(io, devDir ? { ...options, dataDir: devDir } : options);
  const resolved = await resolveTarget(ctx, launcher);
  const best = bestAgentModel(resolved.models);
  const userModel = namesModel(tool, launcher.toolArgs);
  const model = resolved.route ?? best?.id;
  if (!model) {
    throw new CliError(
      `no text model is on offer at ${resolved.baseUrl} (GET /v1/models is empty): is any seller up?`,
    );
  }
  if (!userModel && !resolved.route) {
    io.stderr(
      `svc: ${name} uses ${model}, the best text model with tool use on the network (pass ${tool.modelFlags.at(-1)} to choose)\n`,
    );
  }
  const target: ToolTarget = {
    baseUrl: resolved.baseUrl,
    keyEnv: resolved.keyEnv,
    key: resolved.key,
    model,
    setModel: !userModel,
    fastModel: fastAgentModel(resolved.models)?.id ?? model,
    models: resolved.models.map((entry) => ({
      id: entry.id,
      ...(entry.context_length ? { contextLength: entry.context_length } : {}),
      ...(entry.max_output_tokens ? { maxOutputTokens: entry.max_output_tokens } : {}),
      ...(entry.capabilities?.tool_use !== undefined
        ? { toolUse: entry.capabilities.tool_use }
        : {}),
    })),
  };
  const launch = tool.setup(target);
  const env: NodeJS.ProcessEnv = { ...io.env, [resolved.keyEnv]: resolved.key };
  for (const [variable, value] of Object.entries(launch.env)) {
    if (value === undefined) delete env[variable];
    else env[variable] = value;
  }
  // A generated file lives in a private temporary directory for the tool's run only.
  const dir = launch.file ? mkdtempSync(join(tmpdir(), `svc-${name}-`)) : undefined;
  try {
    if (launch.file && dir) {
      const path = join(dir, launch.file.name);
      writeFileSync(path, launch.file.content, { mode: 0o600 });
      env[launch.file.envVar] = path;
    }
    return await runTool(tool, [...launch.args, ...launcher.toolArgs], env);
  } finally {
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

export function registerToolCommands(program: Command, io: CliIo): void {
  for (const [name, tool] of Object.entries(TOOLS) as Array<[ToolName, ToolSpec]>) {
    program
      .command(name)
      .description(
        `launch ${tool.description} against the running buyer or a gateway; other arguments pass through`,
      )
      .argument('[args...]', `arguments for ${tool.bin}`)
      .allowUnknownOption()
      .helpOption('--svc-help', 'show this help')
      .addHelpText('after', `\n${helpText(name)}`)
      // Reached only when the CLI entry did not launch the tool from the raw argument vector.
      .action(async (_args: string[], _options, command: Command) => {
        const raw = command.parent?.args ?? [];
        const code = await launchTool(raw, io);
        if (code !== 0) throw new CliError('', code);
      });
  }
}
