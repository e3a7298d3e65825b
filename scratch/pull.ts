import { createDb } from '../db/postgres/knex.ts';
import { createLogger } from '../db/platform/log.ts';
import { pullEvents } from '../db/queries/events.ts';
const db = createDb('postgres://postgres@127.0.0.1:5432/scratch', { poolMax: 1, log: createLogger('silent') });
const partner = 'b3967e67-6443-4b4b-b0e0-6328bc0e08b9';
const cases: [string, any][] = [
  ['plain', { limit: 51 }],
  ['rare type', { limit: 51, types: ['booking_refunded'] }],
  ['since old', { limit: 51, since: new Date(Date.now() - 9 * 86400e3) }],
  ['since recent', { limit: 51, since: new Date(Date.now() + 86400e3) }],
  ['since + rare', { limit: 51, since: new Date(Date.now() - 9 * 86400e3), types: ['booking_refunded'] }],
];
for (const [name, f] of cases) {
  await pullEvents(db, partner, f);
  const t0 = performance.now();
  let rows;
  for (let i = 0; i < 20; i++) rows = await pullEvents(db, partner, f);
  console.log(name, rows!.length, ((performance.now() - t0) / 20).toFixed(2), 'ms');
}
await db.destroy();
