/**
 * The API against its own contract, for every input: a property-based test generated from the
 * served `/openapi.json`. For every operation of the document, fast-check sends requests whose
 * fields are each either valid for their schema (drawn largely from the real ids, slot starts and
 * dates of a world set up first, so requests reach the use cases and the database) or hostile
 * (`test/helpers/fuzz/request-arbitraries.ts`), and checks every answer (`test/helpers/fuzz/checks.ts`):
 *
 * - no 5xx;
 * - the status is documented for the operation and the body matches its schema;
 * - an error body has `error`, `message` and `request_id` (the X-Request-Id sent back), and a
 *   VALIDATION_ERROR has `details` of `{field, message, in}` naming a field the operation declares
 *   where it declares it;
 * - a request with a valid key gets the rate-limit headers (a 413 or 431 may come first); one
 *   without a usable key gets 401;
 * - a request that must be refused is not answered 2xx: a value its schemas refuse (as the server
 *   decodes it), a body that is absent, not JSON or not application/json, and what the document
 *   cannot say but CONTRACT.md does (U+0000, lone surrogates, years outside 1900..9999);
 * - a 4xx changed nothing: a digest of every business table (every table of the public schema but
 *   knex's and the unlogged rate-limit ones, listed from the catalog) plus the count of pg-boss jobs
 *   is the same before and after. Requests run one at a time so that a change is attributable.
 *
 * Bounded and reproducible: FUZZ_RUNS requests in all (default 4,000), spread over the operations by
 * how many inputs each has; the seed is FUZZ_SEED when set, else random, and printed on failure.
 * A failing operation stops at its first counterexample, shrunk by fast-check (within a time budget),
 * and prints it with a curl command. FUZZ_SURVEY=1 instead runs every request and lists every
 * distinct failure, deduplicated, with the hostile input shapes behind it: the to-do list.
 *
 * The companion tests at the top are the hand-picked inputs that must never regress
 * (`test/helpers/fuzz/hostile-input-cases.ts`). The world, the digest, the checks and the report live in
 * `test/helpers/fuzz/`; this file holds the property and the tests.
 */
import test, { type ExecutionContext } from 'ava';
import fc from 'fast-check';
import { randomBytes } from 'node:crypto';
import { hold } from '../helpers/booking.ts';
import { changedTables } from '../helpers/fuzz/database-digest.ts';
import { useTestDatabase } from '../helpers/database.ts';
import { exercise } from '../helpers/fuzz/exchange.ts';
import { useFuzzFixture } from '../helpers/fuzz/fixture.ts';
import { poolOf } from '../helpers/fuzz/pools.ts';
import { describeExchange, describeFinding, FuzzReport } from '../helpers/fuzz/report.ts';
import { CASES, caseRequest, caseViolations } from '../helpers/fuzz/hostile-input-cases.ts';
import { operationsOf, type Operation } from '../helpers/fuzz/openapi-operations.ts';
import { openApiDocument } from '../helpers/openapi.ts';
import { requestArbitrary } from '../helpers/fuzz/request-arbitraries.ts';

const database = useTestDatabase(test);
const fx = useFuzzFixture(test, database);

const TOTAL_RUNS = Number(process.env.FUZZ_RUNS ?? 4000);
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : randomBytes(4).readInt32LE();
const SURVEY = process.env.FUZZ_SURVEY === '1';
/** How long fast-check may keep shrinking a counterexample (each step is a real request). */
const SHRINK_BUDGET_MS = 4_000;

const report = new FuzzReport();
let requestsSent = 0;
const startedAt = Date.now();

const operationOf = (name: string): Operation => {
  const [method, path] = name.split(' ') as [string, string];
  const op = operationsOf(fx().document).find((o) => o.method === method && o.path === path);
  if (!op) throw new Error(`${name} is not in the served document`);
  return op;
};

// ---------------------------------------------------------------------------------------------
// Hand-picked inputs that must never regress: each is a 400 VALIDATION_ERROR naming its field.

for (const c of CASES) {
  test.serial(`400 VALIDATION_ERROR naming ${c.in} field ${c.field}: ${c.title}`, async (t) => {
    const request = caseRequest(c, fx().world, operationOf(c.operation));
    const exchange = await exercise(fx(), request);
    requestsSent++;
    exchange.violations.push(...caseViolations(c, exchange.response));
    report.record(exchange, { file: false });
    t.deepEqual(exchange.violations, [], `\n${describeExchange(fx(), exchange)}`);
  });
}

// ---------------------------------------------------------------------------------------------
// The property, per operation of the document.

/** Runs per operation: FUZZ_RUNS spread by weight, 4 plus one per input the operation declares. */
function runsFor(op: Operation, all: Operation[]): number {
  const weight = (o: Operation) => 4 + o.parameters.length + Object.keys(o.body?.properties ?? {}).length;
  const total = all.reduce((sum, o) => sum + weight(o), 0);
  return Math.max(1, Math.round((TOTAL_RUNS * weight(op)) / total));
}

const requestIdArbitrary = fc.oneof(
  { withCrossShrink: true },
  { arbitrary: fc.constant(undefined), weight: 20 },
  { arbitrary: fc.constantFrom('fuzz.req-1:2', 'x'.repeat(129), 'has space', '', 'caf\u00e9'), weight: 1 },
);

async function fuzz(t: ExecutionContext, name: string): Promise<void> {
  const document = fx().document;
  const op = operationOf(name);
  const numRuns = runsFor(op, operationsOf(document));
  let failingSince: number | undefined;
  let sent = 0;
  const property = fc.asyncProperty(
    requestArbitrary(document, op, {
      pool: (field) => poolOf(fx().world.pools, field),
      poolWeight: 8,
      validWeight: 8,
    }),
    requestIdArbitrary,
    async (request, requestId) => {
      // Past the shrinking budget, every candidate "passes": fast-check stops at the best so far.
      if (failingSince !== undefined && Date.now() - failingSince > SHRINK_BUDGET_MS) return true;
      const exchange = await exercise(fx(), request, requestId);
      sent++;
      report.record(exchange);
      if (exchange.violations.length === 0 || SURVEY) return true;
      failingSince ??= Date.now();
      throw new Error(`\n${describeExchange(fx(), exchange)}`);
    },
  );
  const details = await fc.check(property, { numRuns, seed: SEED });
  requestsSent += sent;
  verdict(t, name, details, sent);
}

/** Fails with the shrunk counterexample and the distinct failures of `name`, else passes. */
function verdict<T>(t: ExecutionContext, name: string, details: fc.RunDetails<T>, sent: number): void {
  const distinct = () => report.findingsOf(name).map((f) => describeFinding(fx(), f));
  if (details.failed) {
    t.fail(
      `${name}: a counterexample after ${details.numRuns} runs (${details.numShrinks} shrinks); reproduce with ` +
        `FUZZ_SEED=${details.seed} FUZZ_RUNS=${TOTAL_RUNS} (path ${details.counterexamplePath}); ` +
        `${sent} requests sent.` +
        `${details.errorInstance instanceof Error ? details.errorInstance.message : ''}\n` +
        `Distinct failures of ${name} seen so far:\n${distinct().join('\n')}`,
    );
  } else if (report.findingsOf(name).length) {
    t.fail(`${name}: distinct failures\n${distinct().join('\n')}`);
  } else t.pass();
}

// Tests are declared from the document built in-process; each runs on the served one, and the first
// test checks that the two list the same operations.
const declared = operationsOf(openApiDocument()).map((o) => `${o.method} ${o.path}`);

test.serial('the digest sees a write: a hold changes holds, events and the pg-boss jobs', async (t) => {
  const w = fx().world;
  const before = await fx().digest.read();
  const res = await hold(fx().server, w.apiKey, {
    venue_id: w.venueId,
    resource_id: w.court,
    slot_start: w.freeStart,
  });
  t.is(res.status, 201, res.text);
  const changed = changedTables(before, await fx().digest.read());
  for (const table of ['holds', 'reservations', 'events', 'idempotency_keys', 'pgboss.job']) {
    t.true(changed.includes(table), `${table} not in ${changed.join(', ')}`);
  }
});

test.serial('the served document lists the operations the routes declare', (t) => {
  t.deepEqual(
    operationsOf(fx().document).map((o) => `${o.method} ${o.path}`),
    declared,
  );
});

for (const name of declared) {
  test.serial(`fuzz ${name}: no 5xx, documented answers, a 4xx changes nothing`, (t) => fuzz(t, name));
}

test.serial('fuzz summary', (t) => {
  const seconds = ((Date.now() - startedAt) / 1000).toFixed(1);
  t.log(`${requestsSent} requests in ${seconds} s, seed ${SEED}; ${report.findings.size} distinct failures`);
  if (!SURVEY) return void t.pass();
  // How deep the requests reached, then the to-do list.
  for (const [op, counts] of report.answers) {
    const shown = [...counts].sort(([a], [b]) => a.localeCompare(b)).map(([answer, n]) => `${answer} ×${n}`);
    t.log(`${op}: ${shown.join(', ')}`);
  }
  for (const f of report.findings.values()) t.log(describeFinding(fx(), f));
  t.pass();
});
