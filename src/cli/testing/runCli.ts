/** Runs `svc` in-process with captured output, for tests. */
import { main } from '../index.js';
import type { CliIo } from '../io.js';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs one invocation; `env` replaces the process environment entirely. */
export async function runCli(argv: string[], env: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const io: CliIo = {
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
    env,
    isTty: false,
  };
  const code = await main(argv, io);
  return { code, stdout, stderr };
}
