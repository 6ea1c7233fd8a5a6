/**
 * `svc claude`, `svc codex`, `svc opencode` (spec 4.4): launch a coding tool pointed at the
 * running buyer. Arguments after the command pass through to the tool untouched; svc's own global
 * options (--data-dir, --config, --json, --log-level) are read by svc — put `--` before tool flags
 * with those names.
 */
import { spawn } from 'node:child_process';
import type { Command } from 'commander';
import { CliContext } from '../context.js';
import { CliError } from '../errors.js';
import type { CliIo } from '../io.js';

/** The placeholder key the tools send; the buyer checks no keys (spec 5). */
const PLACEHOLDER_KEY = 'svc-local';

interface ToolSpec {
  bin: string;
  description: string;
  install: string;
  env: (buyerUrl: string) => Record<string, string>;
}

export const TOOLS: Record<'claude' | 'codex' | 'opencode', ToolSpec> = {
  claude: {
    bin: 'claude',
    description: 'Claude Code (messages format)',
    install: 'npm install -g @anthropic-ai/claude-code',
    env: (url) => ({ ANTHROPIC_BASE_URL: url, ANTHROPIC_AUTH_TOKEN: PLACEHOLDER_KEY }),
  },
  codex: {
    bin: 'codex',
    description: 'Codex (responses format)',
    install: 'npm install -g @openai/codex',
    env: (url) => ({ OPENAI_BASE_URL: `${url}/v1`, OPENAI_API_KEY: PLACEHOLDER_KEY }),
  },
  opencode: {
    bin: 'opencode',
    description: 'opencode (OpenAI or Anthropic providers)',
    install: 'npm install -g opencode-ai',
    env: (url) => ({
      OPENAI_BASE_URL: `${url}/v1`,
      OPENAI_API_KEY: PLACEHOLDER_KEY,
      ANTHROPIC_BASE_URL: url,
      ANTHROPIC_API_KEY: PLACEHOLDER_KEY,
    }),
  },
};

async function buyerAnswers(url: string): Promise<boolean> {
  try {
    const response = await fetch(`${url}/_svc/status`, { signal: AbortSignal.timeout(2000) });
    await response.body?.cancel();
    return response.ok;
  } catch {
    return false;
  }
}

/** Runs the tool with inherited terminal; resolves with its exit code. */
function runTool(tool: ToolSpec, args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(tool.bin, args, { stdio: 'inherit', env });
    child.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'ENOENT'
          ? new CliError(
              `${tool.bin} is not installed or not on PATH (install it with \`${tool.install}\`)`,
            )
          : error,
      ),
    );
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 128 + 2 : 1)));
  });
}

export function registerToolCommands(program: Command, io: CliIo): void {
  for (const [name, tool] of Object.entries(TOOLS)) {
    program
      .command(name)
      .description(
        `launch ${tool.description} against the running buyer; other arguments pass through`,
      )
      .argument('[args...]', `arguments for ${tool.bin}`)
      .allowUnknownOption()
      .helpOption('--svc-help', `show this help (\`svc ${name} --help\` is passed to ${tool.bin})`)
      .addHelpText(
        'after',
        `\nThe tool talks to the buyer at 127.0.0.1:<buyer.port> with a placeholder key.\nExamples:\n  svc buyer start &   # or: svc up\n  svc ${name}\n  svc ${name} -- --help`,
      )
      .action(async (args: string[], _options, command: Command) => {
        const ctx = CliContext.of(command, io);
        const { config } = ctx.loadConfig();
        const url = `http://127.0.0.1:${config.buyer.port}`;
        if (!(await buyerAnswers(url))) {
          throw new CliError(
            `no buyer answers at ${url}: start one with \`svc buyer start\` (or \`svc up\`) first`,
          );
        }
        const code = await runTool(tool, args, { ...io.env, ...tool.env(url) });
        if (code !== 0) throw new CliError('', code);
      });
  }
}
