/**
 * `--help` of the operator CLI, generated from the same flag schemas that validate: each flag,
 * whether it is required, and what it takes (a schema's description, an enum's values, or the
 * placeholder of the command's usage line). Plain text; printing it changes nothing.
 */
import { z } from 'zod';
import type { Command } from './command.ts';

const INVOCATION = 'npm run --silent ops --';

/** Every command with its usage line. */
export function generalHelp(commands: readonly Command[]): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    `usage: ${INVOCATION} <command> [--flag value]...`,
    '',
    'On success a command prints one JSON object on stdout and exits 0; on failure one line on',
    'stderr, a non-zero exit, and nothing changed. DATABASE_URL names the database (without it,',
    'the embedded database of a running npm start of this checkout).',
    '',
    'commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.usage}`.trimEnd()),
    '',
    `${INVOCATION} <command> --help describes a command's flags.`,
    '',
  ].join('\n');
}

/** One command: its usage line and each flag. */
export function commandHelp(command: Command): string {
  const flags = Object.entries(command.flags.shape);
  const width = Math.max(0, ...flags.map(([flag]) => flag.length + 2));
  return [
    `usage: ${INVOCATION} ${command.name} ${command.usage}`.trimEnd(),
    '',
    ...(flags.length
      ? [
          'flags:',
          ...flags.map(([flag, schema]) => {
            const optional = schema.safeParse(undefined).success;
            return `  ${`--${flag}`.padEnd(width)}  ${optional ? 'optional' : 'required'}; ${describe(command, flag, schema)}`;
          }),
        ]
      : ['no flags']),
    '',
  ].join('\n');
}

function describe(command: Command, flag: string, schema: z.ZodType): string {
  const inner = schema instanceof z.ZodOptional ? (schema.unwrap() as z.ZodType) : schema;
  const description = inner.meta()?.description;
  if (description) return description;
  if (inner instanceof z.ZodEnum) return `one of ${(inner.options as string[]).join(', ')}`;
  const placeholder = new RegExp(`--${flag} (\\S+?)\\]?(?:\\s|$)`).exec(command.usage)?.[1];
  return placeholder ?? 'a value';
}
