/** Where command output goes; tests pass buffers, the binary passes the process streams. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: NodeJS.ProcessEnv;
  /** True when stdout is a terminal (colour, tables); false for pipes. */
  isTty: boolean;
}

/** The process's own streams. */
export function processIo(): CliIo {
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    env: process.env,
    isTty: Boolean(process.stdout.isTTY),
  };
}
