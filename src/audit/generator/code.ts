/** Code and tool output for audit texts, in a probe's language, at an exact length. */
import {
  capital,
  exactly,
  identifier,
  int,
  invented,
  pick,
  type Random,
  type Theme,
} from './draw.js';
import { LANGUAGES, NOUNS, PROBLEMS, VERBS } from './words.js';

const CONSTANT = (random: Random) =>
  `${pick(['MAX', 'DEFAULT', 'MIN', 'BATCH'], random)}_${pick(NOUNS, random).toUpperCase()}S`;
const TYPE = (random: Random) =>
  `${capital(pick(NOUNS, random))}${pick(['Service', 'Repo', 'Error', 'Config', ''], random)}`;

/** One line of code in `language`: statements, declarations, and now and then an error line. */
function codeLine(theme: Theme, language: string, random: Random, indent: string): string {
  const id = identifier(theme, random);
  const n = int(random, 0, 999);
  if (random() < 0.08) {
    return pick(
      [
        `${TYPE(random)}Error: cannot ${pick(VERBS, random)} ${pick(NOUNS, random)} ${n}`,
        `  at ${id} (src/${pick(NOUNS, random)}s/${id}.ts:${n}:${int(random, 1, 80)})`,
        `WARN ${pick(NOUNS, random)} ${pick(VERBS, random)} took ${n} ms`,
      ],
      random,
    );
  }
  switch (language) {
    case 'Python':
      return pick(
        [
          `${indent}${id} = ${pick(VERBS, random)}_${pick(NOUNS, random)}(${n})`,
          `${indent}if not ${id}:`,
          `${indent}return [${pick(NOUNS, random)} for ${pick(NOUNS, random)} in ${id}]`,
          `${indent}def ${id}(${pick(NOUNS, random)}, limit=${CONSTANT(random)}):`,
          `${indent}class ${TYPE(random)}(${TYPE(random)}):`,
          `${indent}raise ValueError(f"bad ${pick(NOUNS, random)}: {${id}!r}")`,
          `${indent}data = json.loads(${id}["${pick(NOUNS, random)}"])`,
          `${indent}with open(${id}) as f:`,
          `${indent}print(f"{${id}}: {len(${pick(NOUNS, random)}s)}")`,
          `${indent}${id}[${n}] = {'id': ${n}, 'ok': True}`,
        ],
        random,
      );
    case 'Go':
      return pick(
        [
          `${indent}${id} := ${pick(VERBS, random)}${TYPE(random)}(ctx, ${n})`,
          `${indent}if err != nil {`,
          `${indent}return nil, fmt.Errorf("${pick(VERBS, random)}: %w", err)`,
          `${indent}}`,
          `${indent}type ${TYPE(random)} struct { ID int; Name string }`,
        ],
        random,
      );
    case 'SQL':
      return pick(
        [
          `${indent}SELECT ${pick(NOUNS, random)}_id, COUNT(*) FROM ${pick(NOUNS, random)}s`,
          `${indent}WHERE created_at > NOW() - INTERVAL '${n} days'`,
          `${indent}GROUP BY 1 ORDER BY 2 DESC LIMIT ${n};`,
          `${indent}JOIN ${pick(NOUNS, random)}s ON ${pick(NOUNS, random)}s.id = ${pick(NOUNS, random)}_id`,
        ],
        random,
      );
    default:
      return pick(
        [
          `${indent}const ${id} = await ${pick(VERBS, random)}${TYPE(random)}(${n});`,
          `${indent}if (!${id}) return null;`,
          `${indent}for (const ${pick(NOUNS, random)} of ${id}) {`,
          `${indent}}`,
          `${indent}${id}.push({ id: ${n}, name: '${invented(random)}' });`,
          `${indent}export const ${CONSTANT(random)} = ${n};`,
          `${indent}throw new ${TYPE(random)}Error(\`${pick(VERBS, random)} failed: \${${id}}\`);`,
          `${indent}});`,
          `${indent}return { ...${id}, ${pick(NOUNS, random)}: [${n}] };`,
          `${indent}const [a, b] = await Promise.all([${id}(), ${pick(VERBS, random)}()]);`,
          `${indent}${id}.map((x) => x.${pick(NOUNS, random)}).filter(Boolean);`,
          `${indent}if (${id}.length === 0) { return; }`,
        ],
        random,
      );
  }
}

/**
 * Code of `chars` characters over `lines` lines (as near as the length allows), in the theme's
 * language or, for tool output, any: lines are drawn until there are as many as wanted, each
 * cut or padded toward the original's mean line length, then the whole is made exact.
 */
export function code(
  chars: number,
  lines: number,
  theme: Theme,
  random: Random,
  anyLanguage = false,
): string {
  const language = anyLanguage ? pick(LANGUAGES, random) : theme.language;
  const count = Math.max(1, Math.min(lines, Math.floor(chars / 2)));
  const width = Math.max(1, Math.floor(chars / count) - 1);
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    let line = codeLine(theme, language, random, '  '.repeat(int(random, 0, 2)));
    for (let tries = 0; line.length > width * 1.6 && tries < 6; tries++) {
      line = codeLine(theme, language, random, '');
    }
    out.push(line.length > width * 2 ? line.slice(0, width * 2).trimEnd() : line);
  }
  let text = out.join('\n');
  while (text.length > chars && out.length > 1) {
    out.pop();
    text = out.join('\n');
  }
  const comment = language === 'Python' || language === 'Ruby' ? '# ' : '// ';
  return exactly(text, chars, random, language === 'SQL' ? '-- ' : comment);
}

export function toolOutput(chars: number, theme: Theme, random: Random): string {
  const out: string[] = [];
  let size = 0;
  const forms = [
    () =>
      `${theme.project}/${pick(NOUNS, random)}s/${identifier(theme, random)}.${pick(['ts', 'py', 'go', 'md', 'json'], random)}`,
    () =>
      `ok ${int(random, 1, 400)} - ${pick(VERBS, random)}s ${pick(NOUNS, random)}s (${int(random, 1, 900)} ms)`,
    () => `${pick(NOUNS, random)}: ${int(random, 0, 100000)}`,
    () => `${capital(pick(PROBLEMS, random))}.`,
  ];
  while (size < chars) {
    const line = pick(forms, random)();
    out.push(line);
    size += line.length + 1;
  }
  return exactly(out.join('\n'), chars, random);
}
