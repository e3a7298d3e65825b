/**
 * The floor the edge benchmark measures the web process against: the least an HTTP process on the
 * service's stack can do for a hold → confirm cycle. Koa and @koa/router, a JSON body read and
 * checked by zod, the key authenticated and the hold placed and confirmed by the service's own
 * statements through its own database layer (the same SQL, the same batching of a key's
 * authentications, the same pool size), and the database's answer sent back as it came. What it
 * leaves out is the edge: request ids, the request log and metrics, the in-flight tracker, error
 * rendering, the rate-limit headers, idempotency fingerprints, presenters, the full validation of
 * the API's schemas. Refusals answer 409 with no body; nothing here is the API.
 *
 * With EDGE_FLOOR=bare it is less again, the platform's own floor: node:http instead of Koa and
 * the router, the body parsed by JSON.parse and not checked, the same statements through the same
 * database layer. What is left is what Node and the database driver cost for the cycle on this
 * machine, which no framework or edge can go below.
 *
 * `node test/bench/edge-floor-app.ts` with DATABASE_URL and PORT; started by test/bench/edge.ts.
 */
import Router from '@koa/router';
import Koa from 'koa';
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { z } from 'zod';
import { createDb } from '../../db/postgres/knex.ts';
import * as bookings from '../../db/queries/bookings.ts';
import type { DatabaseWrite } from '../../db/queries/database-write.ts';
import * as holds from '../../db/queries/holds.ts';
import { KeyAuthenticator } from '../../db/queries/key-authenticator.ts';
import { hashApiKey } from '../../db/rules/api-key.ts';

const db = createDb(process.env.DATABASE_URL!, { poolMax: Number(process.env.WEB_DATABASE_POOL_SIZE ?? 6) });
const keys = new KeyAuthenticator(db);

const Hold = z.object({
  venue_id: z.uuid(),
  resource_id: z.uuid(),
  slot_start: z.iso.datetime({ offset: true }),
  slot_duration_minutes: z.number().int().positive(),
  idempotency_key: z.string().min(1).max(255),
});
const Confirm = z.object({
  hold_id: z.uuid(),
  payment_reference: z.string().min(1).max(255),
  customer_name: z.string().min(1).max(255),
  customer_phone: z.string().regex(/^[6-9]\d{9}$/),
  idempotency_key: z.string().min(1).max(255),
});

type Ctx = Koa.ParameterizedContext<{ partnerId: string; text: string }>;

/** Authenticates the request's key and reads its body; false when the key does not work. */
async function admit(ctx: Ctx): Promise<boolean> {
  const auth = await keys.authenticate(hashApiKey(ctx.get('x-api-key').toLowerCase()));
  if (!auth?.allowed) {
    ctx.status = auth ? 429 : 401;
    return false;
  }
  ctx.state.partnerId = auth.partnerId;
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
  ctx.state.text = Buffer.concat(chunks).toString('utf8');
  return true;
}

const fingerprintOf = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * A write route: the key admitted, the body read and checked by `schema`, the statement run; 201
 * with the database's result as `present` shapes it, 409 for any refusal.
 */
function writeRoute<T>(
  schema: z.ZodType<T>,
  run: (body: T, partnerId: string, fingerprint: string) => Promise<DatabaseWrite>,
  present: (result: Record<string, unknown>) => unknown = (result) => result,
) {
  return async (ctx: Ctx) => {
    if (!(await admit(ctx))) return;
    const body = schema.parse(JSON.parse(ctx.state.text));
    const outcome = await run(body, ctx.state.partnerId, fingerprintOf(ctx.state.text)).catch(
      () => undefined,
    );
    if (!outcome) {
      ctx.status = 409;
      return;
    }
    ctx.status = 201;
    ctx.body = present(outcome.result as Record<string, unknown>);
  };
}

/** The two statements of a cycle, as both floors run them. */
const placeHold = (body: z.infer<typeof Hold>, partnerId: string, fingerprint: string) =>
  holds.place(db, {
    partnerId,
    idempotencyKey: body.idempotency_key,
    fingerprint,
    venueId: body.venue_id,
    resourceId: body.resource_id,
    slotStart: new Date(body.slot_start),
    durationMinutes: body.slot_duration_minutes,
    customerPhone: null,
  });
const presentHold = (hold: Record<string, unknown>) => ({ hold_id: hold.id, ...hold });
const confirmHold = (body: z.infer<typeof Confirm>, partnerId: string, fingerprint: string) =>
  bookings.confirm(db, {
    partnerId,
    idempotencyKey: body.idempotency_key,
    fingerprint,
    holdId: body.hold_id,
    paymentReference: body.payment_reference,
    customerName: body.customer_name,
    customerPhone: `+91${body.customer_phone}`,
    customerEmail: null,
    usePackageCredit: null,
  });

function serveKoa() {
  const router = new Router<{ partnerId: string; text: string }>();
  router.get('/health', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.post('/api/v1/bookings/hold', writeRoute(Hold, placeHold, presentHold));
  router.post('/api/v1/bookings/confirm', writeRoute(Confirm, confirmHold));
  const app = new Koa<{ partnerId: string; text: string }>();
  app.use(router.routes());
  return app.listen(Number(process.env.PORT), '127.0.0.1');
}

/** node:http alone: the same admission and statements, the body parsed and trusted as it is. */
function serveBare() {
  // Each route's statement and how its result is answered.
  const routes: Record<
    string,
    {
      run: (body: never, partnerId: string, fingerprint: string) => Promise<DatabaseWrite>;
      present: (result: Record<string, unknown>) => unknown;
    }
  > = {
    '/api/v1/bookings/hold': { run: placeHold, present: presentHold },
    '/api/v1/bookings/confirm': { run: confirmHold, present: (result) => result },
  };
  const send = (res: ServerResponse, status: number, body?: unknown) => {
    const text = body === undefined ? '' : JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  };
  const answer = async (req: IncomingMessage, res: ServerResponse) => {
    if (req.url === '/health') return send(res, 200, { status: 'ok' });
    const route = routes[req.url ?? ''];
    if (req.method !== 'POST' || !route) return send(res, 404);
    const auth = await keys.authenticate(hashApiKey(String(req.headers['x-api-key']).toLowerCase()));
    if (!auth?.allowed) return send(res, auth ? 429 : 401);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const outcome = await route
      .run(JSON.parse(text) as never, auth.partnerId, fingerprintOf(text))
      .catch(() => undefined);
    if (!outcome) return send(res, 409);
    send(res, 201, route.present(outcome.result as Record<string, unknown>));
  };
  const fail = (res: ServerResponse) => (res.headersSent ? res.destroy() : send(res, 500));
  return createServer((req, res) => void answer(req, res).catch(() => fail(res))).listen(
    Number(process.env.PORT),
    '127.0.0.1',
  );
}

const server = process.env.EDGE_FLOOR === 'bare' ? serveBare() : serveKoa();
process.on('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  void db.destroy().then(() => process.exit(0));
});
