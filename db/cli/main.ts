/**
 * The operator CLI: `npm run --silent ops -- <command> [--flag value]...`. On success it prints
 * exactly one JSON object on stdout and exits 0; on failure one line on stderr, exit 1 (2 for a
 * usage error), and nothing changed: flags are validated first and each command is one transaction.
 * `--help` (alone, or after a command) prints plain-text usage instead and exits 0.
 */
import { parseArgs } from 'node:util';
import { loadConfigOrExit, requireDatabaseUrl } from '../platform/config.ts';
import { startDatabaseUrl } from '../platform/embedded/announce.ts';
import { createDb } from '../postgres/knex.ts';
import { bookingRuleCommands } from './booking-rule-commands.ts';
import { CommandError, type Command } from './command.ts';
import { deliveryCommands } from './delivery-commands.ts';
import { demoSeedCommand } from './demo-seed.ts';
import { commandHelp, generalHelp } from './help.ts';
import { partnerCommands } from './partner-commands.ts';
import { venueCommands } from './venue-commands.ts';

/** Every operator command. */
export const COMMANDS: readonly Command[] = [
  ...partnerCommands,
  ...venueCommands,
  ...bookingRuleCommands,
  ...deliveryCommands,
  demoSeedCommand,
];

class UsageError extends Error {}

/**
 * A refusal as the one line the contract promises: line breaks an operator's value carried
 * (`--timezone $'Asia/Kolk\nata'`) are written escaped, as `\n`.
 */
export function oneLine(reason: string): string {
  return reason.replace(/[\n\r\v\f\u0085\u2028\u2029]/g, (c) =>
    c === '\n' ? '\\n' : c === '\r' ? '\\r' : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** Finds the command and validates its flags; throws UsageError with a one-line reason. */
export function parseCommandLine(argv: string[]): { command: Command; flags: Record<string, unknown> } {
  const [name, ...rest] = argv;
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) {
    throw new UsageError(
      `${name ? `unknown command "${name}"` : 'no command given'}; commands: ${COMMANDS.map((c) => c.name).join(', ')}`,
    );
  }
  const usage = `usage: ${command.name} ${command.usage}`;
  let given: Record<string, string[] | undefined>;
  try {
    // Every flag may come more than once here, so that a repeated one is refused below rather
    // than the last value silently winning (`--venue A --venue B` names two venues).
    const options = Object.fromEntries(
      Object.keys(command.flags.shape).map((flag) => [flag, { type: 'string' as const, multiple: true }]),
    );
    given = parseArgs({ args: rest, options, strict: true, allowPositionals: false }).values as Record<
      string,
      string[] | undefined
    >;
  } catch (err) {
    // One line, as every refusal: node's message for `--days -1` spans three.
    const message = (err as Error).message.replace(/\s*\n\s*/g, ' ');
    throw new UsageError(`${command.name}: ${message}; ${usage}`);
  }
  const values: Record<string, string> = {};
  for (const [flag, list = []] of Object.entries(given)) {
    if (list.length > 1) throw new UsageError(`${command.name}: --${flag} given more than once; ${usage}`);
    if (list.length === 1) values[flag] = list[0]!;
  }
  const parsed = command.flags.safeParse(values);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const flag = issue.path.length ? `--${issue.path.map(String).join('.')}` : 'flags';
    const message =
      issue.code === 'invalid_type' && issue.input === undefined ? 'is required' : issue.message;
    throw new UsageError(`${command.name}: ${flag} ${message}; ${usage}`);
  }
  return { command, flags: parsed.data };
}

async function main(): Promise<void> {
  // Node's warnings one line each, as every line the CLI prints on stderr: its own printer wrote
  // pg's nine-line notice about `sslmode=require` in DATABASE_URL beside the command's answer.
  process.removeAllListeners('warning');
  process.on('warning', (warning) => {
    process.stderr.write(`${oneLine(`warning: ${warning.message.split('\n')[0]!}`)}\n`);
  });
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    // Usage, before anything else: no configuration, no database, exit 0.
    const command = COMMANDS.find((c) => c.name === args[0]);
    process.stdout.write(command ? commandHelp(command) : generalHelp(COMMANDS));
    return;
  }
  let parsed: ReturnType<typeof parseCommandLine>;
  try {
    parsed = parseCommandLine(args);
  } catch (err) {
    process.stderr.write(`${oneLine((err as Error).message)}\n`);
    process.exitCode = 2;
    return;
  }
  const config = loadConfigOrExit();
  // Without DATABASE_URL: the embedded database of a running `npm start` of this checkout.
  const url =
    config.databaseUrl ??
    startDatabaseUrl() ??
    requireDatabaseUrl(config, 'or run npm start in this checkout: ops then uses its embedded database');
  // Jobs the CLI queues (deliveries:redeliver) get the lease the worker expects, as web's do.
  const db = createDb(url, {
    poolMax: 1,
    applicationName: 'booking-ops',
    poolMode: config.databasePoolMode,
  });
  try {
    const output = await db.transaction((trx) => parsed.command.run(trx, parsed.flags));
    process.stdout.write(`${JSON.stringify(output)}\n`);
  } catch (err) {
    const reason = err instanceof CommandError ? err.message : `failed: ${(err as Error).message}`;
    process.stderr.write(`${oneLine(`${parsed.command.name}: ${reason}`)}\n`);
    process.exitCode = 1;
  } finally {
    await db.destroy();
  }
}

if (import.meta.main) await main();
