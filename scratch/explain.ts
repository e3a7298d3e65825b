import { createDb } from '../db/postgres/knex.ts';
import { createLogger } from '../db/platform/log.ts';
const db = createDb('postgres://postgres@127.0.0.1:5432/scratch', { poolMax: 1, log: createLogger('silent') });
db.on('query', (q: any) => { if (q.sql.includes('authorized_venues')) console.log(q.sql, JSON.stringify(q.bindings)); });
const { pullEvents } = await import('../db/queries/events.ts');
await pullEvents(db, 'b3967e67-6443-4b4b-b0e0-6328bc0e08b9', { limit: 51, types: ['booking_refunded'] });
await db.destroy();
