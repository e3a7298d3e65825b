/**
 * The rules of webhook attempts (the spec's "Delivery and retry"), in one place for the workers
 * that make attempts and the statements that record them: how many, when the next one is due, how
 * long one may be in flight before its worker is presumed dead, and what that failure says.
 */
import { randomUUID } from 'node:crypto';
import type { Config } from '../platform/config.ts';
import type { NextAttempt } from '../queries/webhook-deliveries.ts';

/** Attempts per delivery, the spec's "5 in total". */
export const MAX_ATTEMPTS = 5;

/** The last_error of an attempt whose worker died (or stalled) past the attempt's lease. */
export const ABANDONED_ATTEMPT = 'the worker stopped during the attempt';

/**
 * How long past its HTTP deadline (WEBHOOK_TIMEOUT_MS) an attempt may still be recording its
 * outcome before another worker may declare it abandoned. Recording is one short statement in a
 * batch; the margin covers a slow commit or a stalled event loop.
 */
const ATTEMPT_LEASE_MARGIN_SECONDS = 5;

/** Seconds from an attempt's start after which its worker is presumed dead (its lease). */
export function attemptLeaseSeconds(config: Config): number {
  return config.webhookTimeoutMs / 1000 + ATTEMPT_LEASE_MARGIN_SECONDS;
}

/** The attempt after failed attempt number `attempt`, or null when that was the last. */
export function nextAttempt(config: Config, attempt: number): NextAttempt | null {
  if (attempt >= MAX_ATTEMPTS) return null;
  return { attemptId: randomUUID(), afterSeconds: config.webhookRetryDelays[attempt - 1]! };
}
