/**
 * The webhook dispatcher: every worker process runs one, which claims due attempts from the delivery
 * schedule (`webhook_deliveries`: each delivery names its next attempt and when it is due), sends
 * them side by side, and records their outcomes, in batches both ways (CONTRACT.md, "Delivery
 * isolation"):
 *
 * - Attempts run per endpoint origin (scheme and authority): at most PER_ORIGIN of one origin are
 *   in flight in this process, and a claim takes none of an origin already at that, so a slow or
 *   silent endpoint costs time only to its own deliveries. Nothing waits for an attempt but its own
 *   outcome: a claim is never held back by attempts in flight, only by MAX_IN_FLIGHT in all.
 * - An origin that never answers still gets every attempt: PER_ORIGIN at a time, each ending at
 *   its own deadline, which is the contract's "at least 4 in flight while 4 are due".
 * - Attempts come due by a commit (a new event, a redelivery: `publish_event()` notifies
 *   ATTEMPTS_DUE_CHANNEL, which this process LISTENs on) or by time (a retry after its delay):
 *   polling every POLL_INTERVAL_MS finds those, and anything a lost notification missed.
 * - An origin the last claim may have left attempts of behind (it had no room, or the claim took
 *   all the room it had) is claimed for again as each of its attempts ends: a backlog drains at the
 *   pace its endpoint answers, not one claim's worth a poll. At a steady pace no origin is left
 *   behind and there is one claim an event.
 * - Outcomes are recorded in batches (`settle`), each attempt on its own conditions; a batch that
 *   fails (the database away) is tried again. An attempt whose worker died in flight is taken over
 *   once its lease passes (`takeOverAbandoned`, every SWEEP_INTERVAL_MS): recorded as failed and
 *   moved on, so delivery is at least once.
 *
 * - Attempts go out through one WebhookClient (workers/webhook-http.ts): connections kept alive and
 *   pooled per origin, each attempt still under its own deadline and the connect-time address check.
 *
 * On stop: no more claims; the attempts in flight finish (each within WEBHOOK_TIMEOUT_MS) and their
 * outcomes are recorded before the process lets go of its pools.
 */
import pg from 'pg';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../db/platform/log.ts';
import { unserved, type Metrics } from '../db/platform/metrics.ts';
import type { Knex } from '../db/postgres/knex.ts';
import * as deliveries from '../db/queries/webhook-deliveries.ts';
import { ABANDONED_ATTEMPT, attemptLeaseSeconds, MAX_ATTEMPTS } from '../db/rules/webhook-attempts.ts';
import { sendAttempt, type AttemptDeps } from './webhook-deliver.ts';
import { WebhookClient } from './webhook-http.ts';

/**
 * Attempts of one origin in flight in one process, at most (the contract asks for 4 or more). Claims
 * are one at a time and refill what finished meanwhile, so an origin's slots sit empty while a
 * claim runs (7 ms idle, 30 ms with the database busy): with 8, ten busy origins got 80 in flight
 * and ~960 deliveries/s in the shared harness's `fanout` burst; with 16, ~1,400 (docs/BENCHMARKS.md).
 */
export const PER_ORIGIN = 16;
/** Attempts in flight in one process, at most: sockets waiting on endpoints, not connections. */
export const MAX_IN_FLIGHT = 2000;
/** Attempts one claim takes, at most. */
const CLAIM_BATCH = 100;
/** How often due attempts are looked for without a notification (retries, missed wake-ups). */
const POLL_INTERVAL_MS = 500;
/** How often attempts whose worker died are looked for. */
const SWEEP_INTERVAL_MS = 2000;
/** Outcomes wait this long for company before they are recorded, unless SETTLE_BATCH are waiting. */
const SETTLE_DELAY_MS = 5;
const SETTLE_BATCH = 200;
/** The pause before recording again after the database refused a batch of outcomes. */
const SETTLE_RETRY_MS = 1000;
/**
 * How long a stopping worker keeps trying to record the outcomes it has: through a database restart,
 * not through an outage. What it could not record is taken over once its lease runs out (an attempt
 * that was delivered may then be sent again: at least once).
 */
const STOP_SETTLE_MS = 10_000;

/** What the dispatcher works with. */
export interface DispatcherDeps extends AttemptDeps {
  db: Knex;
  log: Logger;
  metrics?: Metrics | undefined;
  /** Where to LISTEN for due attempts; without it, the dispatcher only polls. */
  databaseUrl?: string | undefined;
  /** How often to look for due attempts unasked; POLL_INTERVAL_MS unless a test says otherwise. */
  pollIntervalMs?: number | undefined;
}

/** A running dispatcher. */
export interface Dispatcher {
  /** Looks for due attempts now (a test that made one due, or a notification). */
  wake(): void;
  stop(): Promise<void>;
}

/** Starts the dispatcher of this process. */
export async function startDispatcher(deps: DispatcherDeps): Promise<Dispatcher> {
  const dispatcher = new DeliveryDispatcher(deps);
  await dispatcher.start();
  return dispatcher;
}

class DeliveryDispatcher implements Dispatcher {
  private readonly deps: DispatcherDeps;
  /** One pooled client for every attempt of this process (keep-alive per origin). */
  private readonly http: WebhookClient;
  private readonly busy = new Map<string, number>();
  /** Origins the last claim may have left due attempts of behind (see claimWhileDue). */
  private leftBehind = new Set<string>();
  private inFlight = 0;
  private readonly running = new Set<Promise<void>>();
  private claiming: Promise<void> | undefined;
  private claimAgain = false;
  private stopped = false;
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly settler: Settler;
  private readonly listener: Listener | undefined;

  constructor(deps: DispatcherDeps) {
    this.http = new WebhookClient({
      timeoutMs: deps.config.webhookTimeoutMs,
      allowPrivate: deps.config.webhookAllowPrivateTargets,
      lookup: deps.lookup,
      // Each attempt in flight its own socket, with room for sockets still closing after an abort.
      socketsPerOrigin: 2 * PER_ORIGIN,
    });
    this.deps = { ...deps, http: this.http };
    this.settler = new Settler(deps);
    this.listener = deps.databaseUrl
      ? new Listener(deps.databaseUrl, deps.log, () => this.wake())
      : undefined;
  }

  async start(): Promise<void> {
    await this.listener?.start();
    this.timers.push(setInterval(() => this.wake(), this.deps.pollIntervalMs ?? POLL_INTERVAL_MS));
    this.timers.push(setInterval(() => void this.sweep(), SWEEP_INTERVAL_MS));
    this.wake();
  }

  wake(): void {
    if (this.stopped) return;
    if (this.claiming) {
      this.claimAgain = true;
      return;
    }
    this.claiming = this.claimWhileDue().finally(() => (this.claiming = undefined));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const timer of this.timers) clearInterval(timer);
    await this.listener?.stop();
    await this.claiming;
    await Promise.all([...this.running]);
    await this.settler.drain(STOP_SETTLE_MS);
    await this.http.close();
  }

  /** Claims and launches due attempts until none is due or no room is left. */
  private async claimWhileDue(): Promise<void> {
    const { db, log } = this.deps;
    do {
      this.claimAgain = false;
      const limit = Math.min(CLAIM_BATCH, MAX_IN_FLIGHT - this.inFlight);
      if (limit <= 0) return;
      // What the claim is judged against: attempts that end while it runs free room it did not see.
      const busy = new Map(this.busy);
      let plans: deliveries.AttemptPlan[];
      try {
        plans = await deliveries.claimDue(db, { limit, perOrigin: PER_ORIGIN, busy }, MAX_ATTEMPTS);
      } catch (err) {
        // The database is away: the next poll tries again, not every attempt that ends meanwhile.
        this.leftBehind = new Set();
        log.warn({ err: (err as Error).message }, 'could not claim webhook attempts');
        return;
      }
      this.leftBehind = originsLeftBehind(busy, plans);
      for (const plan of plans) this.launch(plan);
      if (plans.length === limit) this.claimAgain = true;
    } while (this.claimAgain && !this.stopped);
  }

  private launch(plan: deliveries.AttemptPlan): void {
    const origin = plan.origin;
    this.busy.set(origin, (this.busy.get(origin) ?? 0) + 1);
    this.inFlight++;
    const run = sendAttempt(plan, this.deps)
      .then((settled) => this.settler.add(plan, settled))
      .catch((err: unknown) => this.deps.log.error({ err, delivery_id: plan.delivery.id }, 'webhook attempt'))
      .finally(() => {
        const left = this.busy.get(origin)! - 1;
        if (left === 0) this.busy.delete(origin);
        else this.busy.set(origin, left);
        this.inFlight--;
        this.running.delete(run);
        // Room has opened where a claim may have left attempts behind: look again (a claim under
        // way is followed by another, so attempts ending together cost one more claim, not one each).
        if (this.leftBehind.has(origin) || this.inFlight === MAX_IN_FLIGHT - 1) this.wake();
      });
    this.running.add(run);
  }

  /** Takes over attempts whose worker died, and counts what that decided. */
  private async sweep(): Promise<void> {
    if (this.stopped) return;
    const { db, config, log, metrics = unserved } = this.deps;
    try {
      const moved = await deliveries.takeOverAbandoned(db, {
        leaseSeconds: attemptLeaseSeconds(config),
        maxAttempts: MAX_ATTEMPTS,
        retryDelays: config.webhookRetryDelays,
        limit: CLAIM_BATCH,
        error: ABANDONED_ATTEMPT,
      });
      for (const status of moved) {
        metrics.deliveryAttempts.inc({ outcome: 'failed' });
        if (status === 'dead_letter') metrics.deadLetters.inc();
      }
      if (moved.length) log.warn({ attempts: moved.length }, 'webhook attempts abandoned by their worker');
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'could not look for abandoned webhook attempts');
    }
  }
}

/**
 * Records outcomes in batches: an outcome waits SETTLE_DELAY_MS for others, then all waiting are
 * recorded by one `settle`; a batch the database refused is tried again until it is recorded.
 */
class Settler {
  private readonly deps: DispatcherDeps;
  private waiting: { plan: deliveries.AttemptPlan; settled: deliveries.SettledAttempt }[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  /** Set by drain(): when a batch the database keeps refusing is given up. */
  private giveUpAt: number | undefined;

  constructor(deps: DispatcherDeps) {
    this.deps = deps;
  }

  add(plan: deliveries.AttemptPlan, settled: deliveries.SettledAttempt): void {
    this.waiting.push({ plan, settled });
    if (this.waiting.length >= SETTLE_BATCH) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), SETTLE_DELAY_MS);
  }

  /**
   * Resolves once every outcome added so far is recorded, or after `withinMs` of trying (a worker
   * stopping during an outage): what is left then is abandoned to the lease.
   */
  async drain(withinMs: number): Promise<void> {
    this.giveUpAt = Date.now() + withinMs;
    this.flush();
    await this.flushing;
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.waiting;
    this.waiting = [];
    if (batch.length) this.flushing = this.flushing.then(() => this.record(batch));
  }

  private async record(batch: { plan: deliveries.AttemptPlan; settled: deliveries.SettledAttempt }[]) {
    const { db, log, metrics = unserved } = this.deps;
    for (;;) {
      try {
        const recorded = await deliveries.settle(
          db,
          batch.map((b) => b.settled),
        );
        for (const { plan, settled } of batch) {
          const { ok, statusCode: status, error } = settled.outcome;
          const wasRecorded = recorded.has(settled.attemptId);
          metrics.deliveryAttempts.inc({ outcome: ok ? 'delivered' : 'failed' });
          if (wasRecorded && !ok && !settled.next) metrics.deadLetters.inc();
          // recorded false: the attempt was declared abandoned meanwhile and its delivery moved on.
          log.info(
            {
              ...requestOf(plan),
              delivery_id: plan.delivery.id,
              attempt_id: settled.attemptId,
              attempt: plan.delivery.attempts,
              partner_id: plan.delivery.partner_id,
              ok,
              status,
              error,
              recorded: wasRecorded,
            },
            'webhook attempt',
          );
        }
        return;
      } catch (err) {
        log.warn(
          { err: (err as Error).message, attempts: batch.length },
          'could not record webhook attempts',
        );
        if (this.giveUpAt !== undefined && Date.now() + SETTLE_RETRY_MS > this.giveUpAt) {
          log.warn(
            { attempts: batch.length },
            'stopping: webhook attempts left unrecorded, to be taken over after their lease',
          );
          return;
        }
        await sleep(SETTLE_RETRY_MS);
      }
    }
  }
}

/**
 * The origins a claim judged against `busy` may have left due attempts of behind: those it skipped
 * as full, and those it took as many of as they had room for. An origin given fewer had no more due
 * (`claimDue` ranks every subscription's oldest due attempts), or lost them to the claim's limit:
 * the claim was full then, and claims again.
 */
function originsLeftBehind(busy: Map<string, number>, plans: deliveries.AttemptPlan[]): Set<string> {
  const taken = new Map<string, number>();
  for (const plan of plans) taken.set(plan.origin, (taken.get(plan.origin) ?? 0) + 1);
  const behind = new Set<string>();
  for (const [origin, n] of busy) if (n >= PER_ORIGIN) behind.add(origin);
  for (const [origin, n] of taken) if (n >= PER_ORIGIN - (busy.get(origin) ?? 0)) behind.add(origin);
  return behind;
}

/** The request that caused the delivery, for its log lines (tracing.ts carries its id). */
function requestOf(plan: deliveries.AttemptPlan): { request_id?: string } {
  const requestId = plan.trace?.request_id;
  return requestId ? { request_id: requestId } : {};
}

/**
 * LISTENs for due attempts on a connection of its own, which it opens again after losing it (a
 * database restart): until then, polling finds the attempts.
 */
class Listener {
  private client: pg.Client | undefined;
  private stopped = false;
  private readonly databaseUrl: string;
  private readonly log: Logger;
  private readonly onDue: () => void;

  constructor(databaseUrl: string, log: Logger, onDue: () => void) {
    this.databaseUrl = databaseUrl;
    this.log = log;
    this.onDue = onDue;
  }

  async start(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.databaseUrl,
      application_name: 'booking-worker-listen',
    });
    client.on('notification', () => this.onDue());
    client.on('error', (err) => {
      this.log.warn({ err: err.message }, 'webhook listener lost its database connection');
      void this.reconnect(client);
    });
    try {
      await client.connect();
      await client.query(`listen ${deliveries.ATTEMPTS_DUE_CHANNEL}`);
      this.client = client;
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'webhook listener could not connect; polling meanwhile');
      void this.reconnect(client);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.client?.end().catch(() => undefined);
  }

  private async reconnect(failed: pg.Client): Promise<void> {
    if (this.client && this.client !== failed) return;
    this.client = undefined;
    await failed.end().catch(() => undefined);
    await sleep(POLL_INTERVAL_MS);
    if (!this.stopped) await this.start();
  }
}
