/**
 * What the fuzz test shares across its tests, set up once per file: the service on its own
 * database, a local webhook receiver, the document as served at `/openapi.json` (the fuzz is
 * generated from what clients see, not from the routes), the world of real records
 * (`world.ts`) and the database digest (`database-digest.ts`).
 */
import type { TestFn } from 'ava';
import { openDigest, type DatabaseDigest } from './database-digest.ts';
import type { DatabaseHandle } from '../database.ts';
import { API_PREFIX } from './world-records.ts';
import { buildWorld, type World } from './world.ts';
import { rawCall, startApp, type TestServer } from '../http.ts';
import { capturingLogger } from '../log.ts';
import type { OpenApiDocument } from './openapi-operations.ts';
import { startReceiver, type Receiver } from '../webhooks.ts';

/** The running service, its served document, the world and the digest. */
export interface FuzzFixture {
  server: TestServer;
  receiver: Receiver;
  document: OpenApiDocument;
  world: World;
  digest: DatabaseDigest;
  /** Every line the service logged, parsed, in order (the checks look at each exchange's own). */
  logLines: Record<string, unknown>[];
}

/** Sets the fixture up before the file's tests and tears it down after them; call the getter inside tests. */
export function useFuzzFixture<C>(test: TestFn<C>, database: DatabaseHandle): () => FuzzFixture {
  let fixture: FuzzFixture | undefined;
  test.before(async () => {
    const { db } = await database.ready();
    // The service logs into the fixture, so that each exchange's lines can be judged with it.
    const { log, lines: logLines } = capturingLogger();
    const server = await startApp({ ...(await database.ready()), log });
    let secret = '';
    const receiver = await startReceiver(() => secret);
    const served = await rawCall(server, { method: 'GET', target: `${API_PREFIX}/openapi.json` });
    if (served.status !== 200) throw new Error(`GET /openapi.json answered ${served.status}`);
    const world = await buildWorld(db, server, receiver.url);
    secret = world.secret;
    const digest = await openDigest(db, database().url);
    fixture = { server, receiver, document: served.body, world, digest, logLines };
  });
  test.after.always(async () => {
    await fixture?.digest.close();
    await fixture?.server.close();
    await fixture?.receiver.close();
  });
  return () => {
    if (!fixture) throw new Error('the fuzz fixture is not ready');
    return fixture;
  };
}
