/** `svc config show|get|set|unset|path`: read and edit `<data-dir>/config.json` with validation. */
import type { Command } from 'commander';
import { getAtPath, readConfigFile, setAtPath, writeConfigFile } from '../../config/index.js';
import { CliContext } from '../context.js';
import { CliError } from '../errors.js';
import type { CliIo } from '../io.js';
import { printJson, toJson } from '../output.js';

/** Parses a command-line value: JSON when it parses (numbers, booleans, arrays, objects), else a string. */
export function parseCliValue(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export function registerConfigCommands(program: Command, io: CliIo): void {
  const config = program
    .command('config')
    .description('show and edit the configuration (<data-dir>/config.json)')
    .addHelpText(
      'after',
      '\nPrecedence: built-in defaults < config file < environment variables < command-line flags.\nExamples:\n  svc config show\n  svc config get buyer.port\n  svc config set buyer.routingPreferences.minTrustScore 40\n  svc config set network.bootstrap \'["/ip4/10.0.0.2/tcp/4001/p2p/16Uiu2..."]\'',
    );

  config
    .command('show')
    .description('print the effective configuration (defaults, file, environment) as JSON')
    .action((_options, command: Command) => {
      const ctx = CliContext.of(command, io);
      printJson(io, ctx.loadConfig().config);
    });

  config
    .command('path')
    .description('print the path of the config file in use')
    .action((_options, command: Command) => {
      const ctx = CliContext.of(command, io);
      const loaded = ctx.loadConfig();
      if (ctx.json) printJson(io, { path: loaded.path, exists: loaded.fileExists });
      else
        io.stdout(
          `${loaded.path}${loaded.fileExists ? '' : ' (not created yet; built-in defaults apply)'}\n`,
        );
    });

  config
    .command('get')
    .description('print one effective value by its dotted path')
    .argument('<path>', 'e.g. buyer.port or buyer.routingPreferences')
    .action((path: string, _options, command: Command) => {
      const ctx = CliContext.of(command, io);
      const value = getAtPath(ctx.loadConfig().config, path);
      if (value === undefined) throw new CliError(`config has no value at "${path}"`);
      io.stdout(typeof value === 'string' && !ctx.json ? `${value}\n` : `${toJson(value)}\n`);
    });

  config
    .command('set')
    .description('set one value in the config file (validated before anything is written)')
    .argument('<path>', 'dotted path, e.g. gateway.port')
    .argument('<value>', 'JSON value (number, true/false, array, object) or a plain string')
    .action((path: string, text: string, _options, command: Command) => {
      const ctx = CliContext.of(command, io);
      const filePath = ctx.loadConfig().path;
      const { file } = readConfigFile(filePath);
      const updated = setAtPath(file, path, parseCliValue(text));
      writeConfigFile(filePath, updated, ctx.dataDir);
      if (!ctx.json) io.stdout(`set ${path} in ${filePath}\n`);
      else printJson(io, { path, value: getAtPath(updated, path), file: filePath });
    });

  config
    .command('unset')
    .description('remove one value from the config file (its default applies again)')
    .argument('<path>', 'dotted path')
    .action((path: string, _options, command: Command) => {
      const ctx = CliContext.of(command, io);
      const filePath = ctx.loadConfig().path;
      const { file, exists } = readConfigFile(filePath);
      if (!exists || getAtPath(file, path) === undefined)
        throw new CliError(`${filePath} does not set "${path}"`);
      writeConfigFile(filePath, setAtPath(file, path, undefined), ctx.dataDir);
      if (!ctx.json) io.stdout(`unset ${path} in ${filePath}\n`);
    });
}
