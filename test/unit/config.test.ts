import test from 'ava';
import { ConfigError, loadConfig } from '../../db/platform/config.ts';

test('defaults follow CONTRACT.md', (t) => {
  const config = loadConfig({});
  t.like(config, {
    databaseUrl: undefined,
    port: 3000,
    serviceEnv: 'local',
    sandbox: true,
    webhookTimeoutMs: 10_000,
    webhookAllowPrivateTargets: true,
    logLevel: 'info',
    databaseStatementTimeoutMs: 10_000,
    databaseLockTimeoutMs: 5_000,
    databasePoolMode: 'session',
    webDatabasePoolSize: 6,
    metricsPort: undefined,
    tracing: false,
  });
  t.deepEqual(config.webhookRetryDelays, [300, 900, 1800, 3600]);
  t.true(Object.isFrozen(config));
});

test('private webhook targets are allowed by default only in local', (t) => {
  t.false(loadConfig({ SERVICE_ENV: 'sandbox' }).webhookAllowPrivateTargets);
  t.false(loadConfig({ SERVICE_ENV: 'production' }).webhookAllowPrivateTargets);
  t.true(
    loadConfig({ SERVICE_ENV: 'production', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' })
      .webhookAllowPrivateTargets,
  );
  t.false(loadConfig({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' }).webhookAllowPrivateTargets);
  t.false(loadConfig({ SERVICE_ENV: 'production' }).sandbox);
});

test('values are parsed; empty variables count as unset', (t) => {
  const config = loadConfig({
    DATABASE_URL: 'postgres://u@h:5432/d',
    PORT: '8080',
    WEBHOOK_RETRY_DELAYS: '1,2,3,4',
    WEBHOOK_TIMEOUT_MS: '500',
    LOG_LEVEL: 'debug',
    SERVICE_ENV: '',
    DATABASE_STATEMENT_TIMEOUT_MS: '0',
    DATABASE_LOCK_TIMEOUT_MS: '250',
    DATABASE_POOL_MODE: 'transaction',
    WEB_DATABASE_POOL_SIZE: '16',
  });
  t.like(config, {
    databaseUrl: 'postgres://u@h:5432/d',
    port: 8080,
    webhookTimeoutMs: 500,
    serviceEnv: 'local',
    databaseStatementTimeoutMs: 0,
    databaseLockTimeoutMs: 250,
    databasePoolMode: 'transaction',
    webDatabasePoolSize: 16,
  });
  t.deepEqual(config.webhookRetryDelays, [1, 2, 3, 4]);
});

test('a bad value is one clear error naming the variable', (t) => {
  const cases: [Record<string, string>, string][] = [
    [{ PORT: 'eighty' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ PORT: '0x50' }, 'PORT'],
    [{ PORT: '1e3' }, 'PORT'],
    [{ DATABASE_STATEMENT_TIMEOUT_MS: '-1' }, 'DATABASE_STATEMENT_TIMEOUT_MS'],
    [{ DATABASE_LOCK_TIMEOUT_MS: '5s' }, 'DATABASE_LOCK_TIMEOUT_MS'],
    [{ SERVICE_ENV: 'staging' }, 'SERVICE_ENV'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ WEBHOOK_RETRY_DELAYS: '300,900' }, 'WEBHOOK_RETRY_DELAYS'],
    [{ WEBHOOK_RETRY_DELAYS: '5m,15m,30m,60m' }, 'WEBHOOK_RETRY_DELAYS'],
    [{ WEBHOOK_TIMEOUT_MS: '0' }, 'WEBHOOK_TIMEOUT_MS'],
    [{ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'yes' }, 'WEBHOOK_ALLOW_PRIVATE_TARGETS'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ DATABASE_POOL_MODE: 'statement' }, 'DATABASE_POOL_MODE'],
    [{ DATABASE_POOL_MODE: 'Transaction' }, 'DATABASE_POOL_MODE'],
    [{ WEB_DATABASE_POOL_SIZE: '0' }, 'WEB_DATABASE_POOL_SIZE'],
    [{ WEB_DATABASE_POOL_SIZE: '101' }, 'WEB_DATABASE_POOL_SIZE'],
    [{ METRICS_PORT: 'metrics' }, 'METRICS_PORT'],
    [{ METRICS_PORT: '65536' }, 'METRICS_PORT'],
    [{ METRICS_PORT: '3000' }, 'METRICS_PORT'],
    [{ PORT: '9464', METRICS_PORT: '9464' }, 'METRICS_PORT'],
  ];
  for (const [env, name] of cases) {
    const error = t.throws(() => loadConfig(env), { instanceOf: ConfigError });
    t.true(error.message.startsWith(`invalid configuration: ${name} `), error.message);
    t.false(error.message.includes('\n'));
  }
});

test('metrics listen where METRICS_PORT says; traces are on with either OTLP endpoint', (t) => {
  t.like(loadConfig({ METRICS_PORT: '9464' }), { metricsPort: 9464, tracing: false });
  t.like(loadConfig({ METRICS_PORT: '0', PORT: '0' }), { metricsPort: 0 });
  t.true(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).tracing);
  t.true(loadConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }).tracing);
  t.false(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: '' }).tracing);
  t.is(loadConfig({ OTEL_SERVICE_NAME: 'booking-jobs' }).tracingServiceName, 'booking-jobs');
});
