/**
 * The service's configuration, parsed from the environment once with zod. This is the only module
 * that reads `process.env`; every process entry point calls `loadConfigOrExit()` and passes the
 * frozen result down. The variables and defaults are fixed by CONTRACT.md.
 */
import { z } from 'zod';
import { wholeNumberText } from './input.ts';
import { createLogger } from './log.ts';

const SERVICE_ENVS = ['local', 'sandbox', 'production'] as const;
const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
const POOL_MODES = ['session', 'transaction'] as const;

const booleanText = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

/**
 * The longest wait before a retry: 30 days. Nobody means a longer one, and one past what
 * PostgreSQL's timestamps hold (some 9e12 s) left a failed attempt that could not be recorded.
 */
const MAX_RETRY_DELAY_SECONDS = 2_592_000;

const retryDelays = z
  .string()
  .regex(/^\d{1,15}(,\d{1,15})*$/, 'must be comma-separated whole seconds, e.g. 300,900,1800,3600')
  .transform((v) => v.split(',').map(Number))
  .refine((delays) => delays.length === 4, 'must list exactly 4 delays (before attempts 2, 3, 4 and 5)')
  .refine(
    (delays) => delays.every((delay) => delay <= MAX_RETRY_DELAY_SECONDS),
    `must be at most ${MAX_RETRY_DELAY_SECONDS} seconds (30 days) each`,
  );

/** Whether a PostgreSQL URL parses as node-postgres parses it (a host-less `user@/db` included). */
function parsesAsUrl(value: string): boolean {
  try {
    new URL(value.replace('@/', '@localhost/'));
    return true;
  } catch {
    return false;
  }
}

const EnvSchema = z.object({
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
    .refine(parsesAsUrl, 'must be a postgres:// URL that parses (check its brackets and escapes)')
    .optional(),
  PORT: wholeNumberText(0, 65535).default(3000),
  SERVICE_ENV: z.enum(SERVICE_ENVS).default('local'),
  WEBHOOK_RETRY_DELAYS: retryDelays.default([300, 900, 1800, 3600]),
  WEBHOOK_TIMEOUT_MS: wholeNumberText(1, 600_000).default(10_000),
  WEBHOOK_ALLOW_PRIVATE_TARGETS: booleanText.optional(),
  LOG_LEVEL: z.enum(LOG_LEVELS).default('info'),
  // 0 turns a timeout off, as in PostgreSQL.
  DATABASE_STATEMENT_TIMEOUT_MS: wholeNumberText(0, 3_600_000).default(10_000),
  DATABASE_LOCK_TIMEOUT_MS: wholeNumberText(0, 3_600_000).default(5_000),
  DATABASE_POOL_MODE: z.enum(POOL_MODES).default('session'),
  WEB_DATABASE_POOL_SIZE: wholeNumberText(1, 100).default(6),
  // Events are promised for at least 30 days (CONTRACT.md), so no shorter.
  RETENTION_DAYS: wholeNumberText(30, 3650).default(30),
  AVAILABILITY_CHANGES_RETENTION_SECONDS: wholeNumberText(10, 2_592_000).default(86_400),
  STREAM_KEEPALIVE_SECONDS: wholeNumberText(1, 60).default(15),
  // Unset: no metrics listener (CONTRACT.md: a process listens on no port its variables do not name).
  METRICS_PORT: wholeNumberText(0, 65535).optional(),
  // Traces are exported when either endpoint is set; the OpenTelemetry SDK reads the rest itself.
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.string().optional(),
  OTEL_SERVICE_NAME: z.string().optional(),
});

/** The parsed, typed configuration every process runs with. */
export interface Config {
  readonly databaseUrl: string | undefined;
  readonly port: number;
  readonly serviceEnv: (typeof SERVICE_ENVS)[number];
  /** `/health` reports `sandbox: false` only in production. */
  readonly sandbox: boolean;
  /** Seconds to wait before delivery attempts 2, 3, 4 and 5. */
  readonly webhookRetryDelays: readonly number[];
  readonly webhookTimeoutMs: number;
  readonly webhookAllowPrivateTargets: boolean;
  readonly logLevel: (typeof LOG_LEVELS)[number];
  /**
   * PostgreSQL `statement_timeout` and `lock_timeout` of the web's and workers' connections, in ms
   * (0: none): a stuck query or lock then ends in a clean 503 (or a retried job) instead of holding
   * a pool slot forever.
   */
  readonly databaseStatementTimeoutMs: number;
  readonly databaseLockTimeoutMs: number;
  /**
   * `transaction`: DATABASE_URL may be a transaction-pooling PgBouncer, so web, migrate and ops keep
   * nothing on a connection between transactions (db/postgres/knex.ts). Workers need a session.
   */
  readonly databasePoolMode: (typeof POOL_MODES)[number];
  /**
   * Connections in a web process's statement pool (pg-boss keeps 2 of its own beside them). More
   * is not faster: each statement is one round trip, and on the measured machine class 6 ran the
   * most hold → confirm cycles per second; 10 and 16 cost PostgreSQL more CPU per cycle in
   * contention than they gained in concurrency (docs/BENCHMARKS.md).
   */
  readonly webDatabasePoolSize: number;
  /** Days events, delivery attempts and idempotency keys are kept before retention.prune deletes them. */
  readonly retentionDays: number;
  /**
   * Seconds availability changes are kept: the worker deletes older ones, and web answers a cursor
   * behind a change older than that 410 CURSOR_EXPIRED (each process by its own value).
   */
  readonly availabilityChangesRetentionSeconds: number;
  /** Seconds of silence after which an availability stream writes a keep-alive comment. */
  readonly streamKeepaliveSeconds: number;
  /** Where `/metrics` and the probes listen (metrics-server.ts); undefined: nowhere. */
  readonly metricsPort: number | undefined;
  /** Whether traces are exported over OTLP (db/platform/tracing.ts). */
  readonly tracing: boolean;
  /** OTEL_SERVICE_NAME when set; otherwise tracing-preload.ts names the process after its part. */
  readonly tracingServiceName: string | undefined;
}

/** A configuration value that cannot be used; `message` names the variable. */
export class ConfigError extends Error {}

/** Parses `env` into a frozen Config, or throws ConfigError naming the first bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  // An empty variable is treated as unset, as shells and Procfile runners often export them so.
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = EnvSchema.safeParse(present);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const name = String(issue?.path[0] ?? 'environment');
    throw new ConfigError(`invalid configuration: ${name} ${issue?.message ?? 'is invalid'}`);
  }
  const e = parsed.data;
  // Both would fail to listen, the second with an error that names neither variable.
  if (e.METRICS_PORT !== undefined && e.METRICS_PORT !== 0 && e.METRICS_PORT === e.PORT) {
    throw new ConfigError('invalid configuration: METRICS_PORT must differ from PORT');
  }
  return Object.freeze({
    databaseUrl: e.DATABASE_URL,
    port: e.PORT,
    serviceEnv: e.SERVICE_ENV,
    sandbox: e.SERVICE_ENV !== 'production',
    webhookRetryDelays: Object.freeze(e.WEBHOOK_RETRY_DELAYS),
    webhookTimeoutMs: e.WEBHOOK_TIMEOUT_MS,
    webhookAllowPrivateTargets: e.WEBHOOK_ALLOW_PRIVATE_TARGETS ?? e.SERVICE_ENV === 'local',
    logLevel: e.LOG_LEVEL,
    databaseStatementTimeoutMs: e.DATABASE_STATEMENT_TIMEOUT_MS,
    databaseLockTimeoutMs: e.DATABASE_LOCK_TIMEOUT_MS,
    databasePoolMode: e.DATABASE_POOL_MODE,
    webDatabasePoolSize: e.WEB_DATABASE_POOL_SIZE,
    retentionDays: e.RETENTION_DAYS,
    availabilityChangesRetentionSeconds: e.AVAILABILITY_CHANGES_RETENTION_SECONDS,
    streamKeepaliveSeconds: e.STREAM_KEEPALIVE_SECONDS,
    metricsPort: e.METRICS_PORT,
    tracing: Boolean(e.OTEL_EXPORTER_OTLP_ENDPOINT ?? e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT),
    tracingServiceName: e.OTEL_SERVICE_NAME,
  });
}

/**
 * How an entry point says its configuration is unusable: `text`, one line on stderr (ops, migrate,
 * start: for a person at a terminal); `json`, one fatal log line on stdout, as web and worker print
 * nothing but JSON lines (CONTRACT.md).
 */
export type RefusalFormat = 'text' | 'json';

/** Writes `message` as `format` says (a fatal line is written at once), and exits with code 1. */
function refuse(message: string, format: RefusalFormat): never {
  if (format === 'json') createLogger('fatal').fatal(message);
  else process.stderr.write(`${message}\n`);
  process.exit(1);
}

/** For entry points: the configuration, or one clear line naming the variable and exit code 1. */
export function loadConfigOrExit(format: RefusalFormat = 'text'): Config {
  try {
    return loadConfig();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    refuse(err.message, format);
  }
}

/**
 * For processes that cannot run without a database (web, worker, migrate, ops): its URL, or one
 * line naming DATABASE_URL (and `hint`, where the process has another way) and exit code 1.
 */
export function requireDatabaseUrl(config: Config, hint?: string, format: RefusalFormat = 'text'): string {
  if (config.databaseUrl) return config.databaseUrl;
  refuse(
    `invalid configuration: DATABASE_URL is required for this command${hint ? ` (${hint})` : ''}`,
    format,
  );
}
