/**
 * Turns an intent into a call of one of the offered tools, with arguments that fit the tool's
 * JSON schema: a dedicated tool (read / list) when there is one, else a shell tool running the
 * equivalent command. Paths become absolute when the schema asks for absolute paths.
 */

import type { OfferedTool } from './conversation.js';
import type { Intent } from './intents.js';

type Json = Record<string, unknown>;

export interface PlannedCall {
  name: string;
  /** The arguments as a JSON object (rendered to a string by the format writers). */
  arguments: Json;
}

const squash = (name: string) => name.toLowerCase().replace(/[^a-z]/g, '');

const READ_TOOLS = ['read', 'readfile', 'view', 'viewfile', 'cat', 'openfile'];
const LIST_TOOLS = ['ls', 'list', 'listdir', 'listdirectory', 'listfiles'];
const SHELL_TOOLS = [
  'bash',
  'shell',
  'execcommand',
  'shellcommand',
  'exec',
  'runcommand',
  'terminal',
];

function byNames(tools: OfferedTool[], names: string[]): OfferedTool | undefined {
  for (const name of names) {
    const tool = tools.find((candidate) => squash(candidate.name) === name);
    if (tool) return tool;
  }
  return undefined;
}

function propertiesOf(tool: OfferedTool): Record<string, Json> {
  const properties = tool.schema?.properties;
  return typeof properties === 'object' && properties !== null
    ? (properties as Record<string, Json>)
    : {};
}

function requiredOf(tool: OfferedTool): string[] {
  const required = tool.schema?.required;
  return Array.isArray(required) ? required.filter((name) => typeof name === 'string') : [];
}

/** The first property whose name matches, required ones first. */
function propertyMatching(tool: OfferedTool, pattern: RegExp): string | undefined {
  const names = Object.keys(propertiesOf(tool));
  const required = requiredOf(tool);
  return (
    names.find((name) => required.includes(name) && pattern.test(name)) ??
    names.find((name) => pattern.test(name))
  );
}

function absolute(path: string, cwd: string | undefined): string {
  if (path.startsWith('/') || !cwd) return path;
  const relative = path.replace(/^\.\/?/, '');
  return relative ? `${cwd.replace(/\/$/, '')}/${relative}` : cwd;
}

function wantsAbsolute(tool: OfferedTool, property: string): boolean {
  const description = propertiesOf(tool)[property]?.description;
  return typeof description === 'string' && /absolute/i.test(description);
}

/** A value of the property's type for required properties the intent does not fill. */
function filler(schema: Json | undefined, purpose: string): unknown {
  if (Array.isArray(schema?.enum) && schema.enum.length > 0) return schema.enum[0];
  if (schema && 'default' in schema) return schema.default;
  switch (schema?.type) {
    case 'number':
    case 'integer':
      return typeof schema.minimum === 'number' && schema.minimum > 0 ? schema.minimum : 1;
    case 'boolean':
      return false;
    case 'array':
      return [];
    case 'object':
      return {};
    default:
      return purpose;
  }
}

function complete(tool: OfferedTool, args: Json, purpose: string): PlannedCall {
  const properties = propertiesOf(tool);
  for (const name of requiredOf(tool)) {
    if (!(name in args)) args[name] = filler(properties[name], purpose);
  }
  return { name: tool.name, arguments: args };
}

function pathCall(
  tool: OfferedTool,
  path: string,
  cwd: string | undefined,
  purpose: string,
): PlannedCall | undefined {
  const property = propertyMatching(tool, /path|file|dir/i);
  if (!property) return undefined;
  const value = wantsAbsolute(tool, property) ? absolute(path, cwd) : path;
  return complete(tool, { [property]: value }, purpose);
}

function shellCall(
  tools: OfferedTool[],
  command: string,
  purpose: string,
): PlannedCall | undefined {
  const tool = byNames(tools, SHELL_TOOLS) ?? tools.find((t) => /shell|bash|exec/i.test(t.name));
  if (!tool) return undefined;
  const property = propertyMatching(tool, /^(command|cmd)$|command|cmd/i);
  if (!property) return undefined;
  const isArray = propertiesOf(tool)[property]?.type === 'array';
  const value = isArray ? ['bash', '-lc', command] : command;
  return complete(tool, { [property]: value }, purpose);
}

const quote = (path: string) =>
  /^[\w./-]+$/.test(path) ? path : `'${path.replace(/'/g, `'\\''`)}'`;

/** The call answering one intent, or undefined when no offered tool can do it. */
export function toolCallFor(
  intent: Intent,
  tools: OfferedTool[],
  cwd: string | undefined,
): PlannedCall | undefined {
  if (intent.kind === 'run') return shellCall(tools, intent.command, `Run ${intent.command}`);
  if (intent.kind === 'read') {
    const purpose = `Read ${intent.path}`;
    const reader =
      byNames(tools, READ_TOOLS) ??
      tools.find((t) => /read/i.test(t.name) && !/mcp|resource|stdin/i.test(t.name));
    return (
      (reader && pathCall(reader, intent.path, cwd, purpose)) ??
      shellCall(tools, `cat ${quote(intent.path)}`, purpose)
    );
  }
  const purpose = `List ${intent.path}`;
  const lister = byNames(tools, LIST_TOOLS);
  return (
    (lister && pathCall(lister, intent.path, cwd, purpose)) ??
    shellCall(tools, `ls ${quote(intent.path)}`, purpose)
  );
}
