/**
 * How each coding tool is pointed at svc, the way its current version reads its settings
 * (docs/guide/buyer.md "Coding tools"; docs/decisions/126-coding-tool-launchers.md). Nothing here writes the
 * user's own config files: Claude Code gets environment variables, Codex `-c` overrides,
 * opencode a generated config file named by OPENCODE_CONFIG.
 */

export type ToolName = 'claude' | 'codex' | 'opencode';

export interface ToolTarget {
  /** Buyer or gateway root, no trailing slash and no /v1. */
  baseUrl: string;
  /** Environment variable that holds the key the tool sends, and its value. */
  keyEnv: string;
  key: string;
  /** The model the launcher chose (the default route or the best agent model). */
  model: string;
  /** False when the user's arguments name the model: the tool then keeps the user's choice. */
  setModel: boolean;
  /** Model for the tool's small/fast slot (titles, summaries). */
  fastModel: string;
  /** Text models on the network (opencode must be told every model it may use). */
  models: Array<{
    id: string;
    contextLength?: number;
    maxOutputTokens?: number;
    toolUse?: boolean;
  }>;
}

export interface ToolLaunch {
  /** Arguments put before the user's own. */
  args: string[];
  /** Environment to add (a value of `undefined` removes the variable). */
  env: Record<string, string | undefined>;
  /** A file to write before the launch (and remove after). */
  file?: { name: string; content: string; envVar: string };
}

export interface ToolSpec {
  bin: string;
  description: string;
  install: string;
  /** Options of the tool that name a model (then the user's choice passes through). */
  modelFlags: string[];
  setup(target: ToolTarget): ToolLaunch;
}

/** TOML string (JSON strings are valid TOML basic strings for what we put in them). */
const toml = (value: string) => JSON.stringify(value);

export const TOOLS: Record<ToolName, ToolSpec> = {
  claude: {
    bin: 'claude',
    description: 'Claude Code (messages format)',
    install: 'npm install -g @anthropic-ai/claude-code',
    modelFlags: ['--model'],
    setup: ({ baseUrl, key, model, setModel, fastModel }) => {
      const main = model;
      return {
        args: [],
        env: {
          // The Anthropic SDK appends /v1/messages itself: the base has no /v1 (spec 4.1 rule 4).
          ANTHROPIC_BASE_URL: baseUrl,
          // A bearer token, as the gateway reads keys (spec 5); an x-api-key would be refused.
          ANTHROPIC_AUTH_TOKEN: key,
          ANTHROPIC_API_KEY: undefined,
          ...(setModel ? { ANTHROPIC_MODEL: model } : {}),
          // Its own model names (aliases "opus", "sonnet", "haiku", subagents) map onto ours.
          ANTHROPIC_DEFAULT_OPUS_MODEL: main,
          ANTHROPIC_DEFAULT_SONNET_MODEL: main,
          ANTHROPIC_DEFAULT_HAIKU_MODEL: fastModel,
          ANTHROPIC_SMALL_FAST_MODEL: fastModel,
          CLAUDE_CODE_SUBAGENT_MODEL: main,
          // No calls to the vendor's own hosts (telemetry, update checks): svc is the endpoint.
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        },
      };
    },
  },
  codex: {
    bin: 'codex',
    description: 'Codex (responses format)',
    install: 'npm install -g @openai/codex',
    modelFlags: ['-m', '--model'],
    setup: ({ baseUrl, keyEnv, model, setModel }) => {
      const provider = [
        `name=${toml('svc')}`,
        `base_url=${toml(`${baseUrl}/v1`)}`,
        `env_key=${toml(keyEnv)}`,
        `wire_api=${toml('responses')}`,
        // svc serves no WebSocket upgrade on /v1/responses: plain HTTP streaming from the start.
        'supports_websockets=false',
        // Codex ignores x-should-retry and retries 4 x 5 times by default (35 s on an unknown
        // model); the buyer already fails over between sellers, so one retry is enough.
        'request_max_retries=1',
        'stream_max_retries=1',
      ].join(', ');
      return {
        args: [
          '-c',
          `model_providers.svc={ ${provider} }`,
          '-c',
          `model_provider=${toml('svc')}`,
          ...(setModel ? ['-c', `model=${toml(model)}`] : []),
        ],
        env: {},
      };
    },
  },
  opencode: {
    bin: 'opencode',
    description: 'opencode (chat-completions format)',
    install: 'npm install -g opencode-ai',
    modelFlags: ['-m', '--model'],
    setup: ({ baseUrl, keyEnv, model, setModel, fastModel, models }) => {
      const entries = Object.fromEntries(
        models.map((entry) => [
          entry.id,
          {
            name: entry.id,
            tool_call: entry.toolUse ?? true,
            ...(entry.contextLength
              ? { limit: { context: entry.contextLength, output: entry.maxOutputTokens ?? 8192 } }
              : {}),
          },
        ]),
      );
      const config = {
        $schema: 'https://opencode.ai/config.json',
        provider: {
          svc: {
            npm: '@ai-sdk/openai-compatible',
            name: 'svc',
            options: { baseURL: `${baseUrl}/v1`, apiKey: `{env:${keyEnv}}` },
            models: entries,
          },
        },
        ...(setModel ? { model: `svc/${model}` } : {}),
        small_model: `svc/${fastModel}`,
      };
      return {
        args: [],
        env: {},
        file: {
          name: 'opencode.json',
          content: `${JSON.stringify(config, null, 2)}\n`,
          envVar: 'OPENCODE_CONFIG',
        },
      };
    },
  },
};

/** True when the user's arguments already name a model for the tool. */
export function namesModel(tool: ToolSpec, args: readonly string[]): boolean {
  return args.some((arg) =>
    tool.modelFlags.some((flag) => arg === flag || arg.startsWith(`${flag}=`)),
  );
}
