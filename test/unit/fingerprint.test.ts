/** The idempotency fingerprint's canonical JSON (api/idempotency.ts). */
import test from 'ava';
import { canonicalJson, fingerprint } from '../../api/idempotency.ts';

test('members are sorted, undefined ones left out, dates written as ISO 8601', (t) => {
  t.is(
    canonicalJson({ b: [1, { d: undefined, c: new Date(0) }], a: 'x', e: null }),
    '{"a":"x","b":[1,{"c":"1970-01-01T00:00:00.000Z"}],"e":null}',
  );
  t.is(canonicalJson([]), '[]');
  t.is(canonicalJson({}), '{}');
  t.is(canonicalJson('é"\n'), JSON.stringify('é"\n'));
  t.is(fingerprint({ a: 1, b: 2 }), fingerprint({ b: 2, a: 1 }));
  t.not(fingerprint({ a: [1, 2] }), fingerprint({ a: [2, 1] }));
});

test('any depth is written without recursion (no stack overflow)', (t) => {
  const depth = 500_000;
  const deep = JSON.parse('['.repeat(depth) + ']'.repeat(depth)) as unknown;
  t.is(canonicalJson(deep).length, 2 * depth);
  let objects: unknown = 0;
  for (let i = 0; i < 200_000; i++) objects = { a: objects };
  t.true(canonicalJson(objects).startsWith('{"a":{"a":'));
});
