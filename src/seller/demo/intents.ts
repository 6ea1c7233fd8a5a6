/**
 * What a user turn asks a coding tool to do, by the demo model's fixed rules (docs/guide/selling.md "Demo
 * model"): read a file, list a directory, run a command. Several asks in one turn become
 * several intents (answered with parallel tool calls).
 */

export type Intent =
  | { kind: 'read'; path: string }
  | { kind: 'list'; path: string }
  | { kind: 'run'; command: string };

/** At most this many tool calls in one answer. */
const MAX_INTENTS = 4;

/** File-like words: a name with an extension, or an absolute path. */
const FILE_PATTERN =
  /(?:^|[\s"'`(,])((?:\.{0,2}\/)?(?:[\w-]+\/)*[\w-]*[A-Za-z][\w-]*\.[A-Za-z0-9]{1,8}|\/[\w./-]+)(?=$|[\s"'`),.;:?!])/g;

const READ_WORDS = /\b(read|cat|open|show|print|display|contents?|what(?:'s| is| does)?)\b/i;
const LIST_WORDS = /\b(list|ls)\b/i;
const RUN_WORDS = /\b(run|execute)\b/i;

function filesIn(text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(FILE_PATTERN)) {
    const path = match[1]!;
    if (/^\d+(\.\d+)+$/.test(path) || path.includes('://')) continue;
    if (!found.includes(path)) found.push(path);
  }
  return found;
}

/** The directory a "list" ask names: after in/of/under, a word ending in `/`, else `.`. */
function listedDirectory(text: string): string {
  const named =
    /\b(?:in|of|under|directory|folder)\s+(?:the\s+)?["'`]?([\w./-]+?)["'`]?(?:\s+(?:directory|folder|dir))?(?=$|[\s,.;:?!])/i.exec(
      text.slice(text.search(LIST_WORDS)),
    );
  const candidate = named?.[1];
  if (candidate && !/^(the|this|current|working|project)$/i.test(candidate)) return candidate;
  const slashed = /(?:^|\s)([\w.-]+\/)(?=$|\s)/.exec(text);
  return slashed?.[1] ?? '.';
}

function commandsIn(text: string): string[] {
  const quoted = [...text.matchAll(/`([^`]{1,500})`/g)].map((match) => match[1]!);
  if (quoted.length > 0) return quoted;
  const after = /\b(?:run|execute)\s+(?:the\s+command\s+)?["']?([^"'\n.;]{1,200})/i.exec(text);
  return after ? [after[1]!.trim()] : [];
}

/** The intents of a user turn, in the order the rules check them (run, read, list). */
export function intentsOf(text: string): Intent[] {
  const intents: Intent[] = [];
  if (RUN_WORDS.test(text)) {
    for (const command of commandsIn(text)) intents.push({ kind: 'run', command });
  }
  if (intents.length === 0 && READ_WORDS.test(text)) {
    for (const path of filesIn(text)) intents.push({ kind: 'read', path });
  }
  if (LIST_WORDS.test(text)) intents.push({ kind: 'list', path: listedDirectory(text) });
  return intents.slice(0, MAX_INTENTS);
}
