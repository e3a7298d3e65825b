/**
 * One structured JSON logger on stdout (pino). Requests and jobs log through children that carry
 * their scope (`request_id`, `partner_id`, `job`, `job_id`). API keys, webhook secrets and SQL
 * bindings are never logged; the redaction list is a second line of defence for headers.
 */
import { pino, type Logger } from 'pino';

export type { Logger };

/** Creates the process logger at the configured level. */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: ['headers["x-api-key"]', 'api_key', 'secret_key'], censor: '[redacted]' },
  });
}
