/**
 * The shape of an operator CLI command and the flag types commands share. A command validates its
 * flags with zod before touching the database and runs in one transaction, so a failure changes
 * nothing.
 */
import { z } from 'zod';
import { DateTimeInput, freeText } from '../platform/input.ts';
import type { Knex } from '../postgres/knex.ts';

/** One CLI verb. `flags` is a zod object whose keys are the flag names without `--`. */
export interface Command<F extends Record<string, unknown> = Record<string, unknown>> {
  name: string;
  usage: string;
  flags: z.ZodType<F> & { shape: Record<string, z.ZodType> };
  run(trx: Knex.Transaction, flags: F): Promise<Record<string, unknown>>;
}

/** Declares a command with its flag types inferred. */
export function defineCommand<F extends Record<string, unknown>>(command: Command<F>): Command {
  return command;
}

/** A reason the command cannot run; printed as one line, nothing is changed. */
export class CommandError extends Error {}

export const text = (max: number) => freeText({ min: 1, max });
/** A uuid, written back as the API shows ids (lower case) whatever case it was typed in. */
export const id = z.guid('must be a uuid').transform((value) => value.toLowerCase());
export const isoDateTime = DateTimeInput;
export const timeOfDay = z
  .string()
  .regex(/^([01]\d|2[0-3]):[0-5]\d$|^24:00$/, 'must be HH:MM (00:00 to 24:00)');

const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];

/** A comma-separated list of weekday names or three-letter forms, as ISO numbers (1 = Monday). */
export const weekdays = z.string().transform((value, ctx) => {
  const days = new Set<number>();
  for (const part of value.split(',').map((p) => p.trim().toLowerCase())) {
    const index = WEEKDAYS.findIndex((day) => day === part || day.slice(0, 3) === part);
    if (index < 0) {
      ctx.addIssue({ code: 'custom', message: `unknown weekday "${part}"` });
      return z.NEVER;
    }
    days.add(index + 1);
  }
  return [...days].sort((a, b) => a - b);
});

/** A comma-separated list of uuids. */
export const idList = z
  .string()
  .transform((v) => [...new Set(v.split(',').map((p) => p.trim().toLowerCase()))])
  .pipe(z.array(id).min(1));

/** Throws CommandError unless `found`. */
export function mustExist(found: boolean, what: string, value: string): void {
  if (!found) throw new CommandError(`no ${what} with id ${value}`);
}
