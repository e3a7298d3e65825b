/**
 * Functions that run on a generic plan (`set plan_cache_mode = force_generic_plan`) keep the plan of
 * their first call on a connection, made whatever the tables then hold. A plan that is right only
 * for a large table (or only for a small one) stays for the connection's life, so the plans that
 * matter are checked here on an empty database, through auto_explain's nested-statement output.
 */
import test from 'ava';
import pg from 'pg';
import { useTestDatabase } from '../helpers/database.ts';

const database = useTestDatabase(test);

/** The plans of the statements `sql` runs, nested ones included, as auto_explain writes them. */
async function plansOf(sql: string): Promise<string> {
  const client = new pg.Client({ connectionString: database().url });
  await client.connect();
  const plans: string[] = [];
  client.on('notice', (notice) => plans.push(notice.message ?? ''));
  try {
    await client.query(`load 'auto_explain'`);
    await client.query(
      'set auto_explain.log_min_duration = 0; set auto_explain.log_nested_statements = on; set client_min_messages = log',
    );
    await client.query(sql);
    return plans.join('\n');
  } finally {
    await client.end();
  }
}

test('record_windows_changed() finds holds by their primary key while the table is empty', async (t) => {
  const plans = await plansOf('select record_windows_changed(array[gen_random_uuid(), gen_random_uuid()])');
  t.regex(plans, /Index Scan using holds_pkey on holds/, plans);
  t.notRegex(plans, /Seq Scan on holds/, plans);
});
