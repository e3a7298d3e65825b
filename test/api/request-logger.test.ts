/**
 * A request's log lines carry its request id and, once its key is known, its partner, whether the
 * line is the request line (written by the process logger) or a handler's (written through the
 * request's own child logger, made only when the handler logs).
 */
import test from 'ava';
import { defineRoute } from '../../api/route.ts';
import { routes } from '../../api/routes/index.ts';
import { useTestDatabase } from '../helpers/database.ts';
import { makePartner } from '../helpers/factories.ts';
import { call, startApp } from '../helpers/http.ts';
import { capturingLogger } from '../helpers/log.ts';

const database = useTestDatabase(test);

test("the request line and a handler's lines name the request and its partner, each field once", async (t) => {
  const { log, raw } = capturingLogger();
  const noisy = defineRoute({
    method: 'GET',
    path: '/test/noisy',
    operationId: 'testNoisy',
    summary: 'Noisy',
    description: 'Logs twice through the request logger.',
    tag: 'Test',
    auth: true,
    responses: { 204: { description: 'Nothing.' } },
    handler(_input, deps) {
      deps.log.info({ step: 1 }, 'handler line');
      deps.log.info({ step: 2 }, 'handler line');
      return Promise.resolve({ status: 204 });
    },
  });
  const { partnerId, apiKey } = await makePartner(database().db);
  const server = await startApp({ ...database(), log }, { routes: [...routes, noisy] });
  try {
    const sent = await call(server, 'GET', '/api/v1/test/noisy', {
      key: apiKey,
      headers: { 'x-request-id': 'req-noisy-1' },
    });
    t.is(sent.status, 204, sent.text);
    const refused = await call(server, 'GET', '/api/v1/test/noisy', { key: 'f'.repeat(64) });
    t.is(refused.status, 401);
    const refusedId = refused.headers.get('x-request-id');

    const lines = raw.map((text) => ({ text, line: JSON.parse(text) as Record<string, unknown> }));
    const ofRequest = (id: string) => lines.filter(({ line }) => line.request_id === id);
    const mine = ofRequest('req-noisy-1');
    t.deepEqual(
      mine.map(({ line }) => [line.msg, line.step, line.partner_id]),
      [
        ['handler line', 1, partnerId],
        ['handler line', 2, partnerId],
        ['request', undefined, partnerId],
      ],
    );
    t.like(mine[2]!.line, { route: '/api/v1/test/noisy', status: 204, level: 30 });
    // Written once each: a child's binding and a line's own field would both be printed.
    for (const { text } of mine) {
      t.is(text.split('"request_id"').length, 2, text);
      t.is(text.split('"partner_id"').length, 2, text);
    }
    // An unknown key: the request is named, no partner.
    const theirs = ofRequest(refusedId!);
    t.deepEqual(
      theirs.map(({ line }) => [line.msg, line.status, 'partner_id' in line]),
      [['request', 401, false]],
    );
  } finally {
    await server.close();
  }
});
