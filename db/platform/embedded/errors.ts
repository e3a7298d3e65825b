/**
 * The embedded PostgreSQL's one kind of error for a person rather than a programmer. Its message is
 * a single line that says what went wrong and what to do; `startEmbeddedPostgres` prints it as is,
 * with no stack trace, and exits.
 */

/** The way out every message offers: the embedded server is a convenience, not a requirement. */
export const OR_DATABASE_URL = 'or set DATABASE_URL to use a PostgreSQL of your own';

/** A failure of the embedded PostgreSQL whose message is one line saying what to do. */
export class EmbeddedPostgresError extends Error {
  override readonly name = 'EmbeddedPostgresError';
}

/**
 * The first line of an error, trimmed: detail that fits in one line. For a failed execFile that is
 * the program's own complaint (its stderr), not "Command failed: …".
 */
export function firstLine(detail: unknown): string {
  const stderr = (detail as { stderr?: unknown } | null)?.stderr;
  const text =
    typeof stderr === 'string' && stderr.trim()
      ? stderr
      : detail instanceof Error
        ? detail.message
        : String(detail);
  return text.trim().split('\n')[0]?.trim() ?? '';
}
