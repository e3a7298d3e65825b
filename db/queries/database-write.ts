/**
 * What a keyed write made in one database function (`place_hold()`, `confirm_hold()` …) returns: its
 * result as JSON, or, when the idempotency key was already used, the key's record, whatever
 * operation made it. The API checks the record before it revives the result (api/idempotency.ts:
 * `databaseWriteOutcome()`).
 */

export interface DatabaseWrite<T = Record<string, unknown>> {
  replayed: boolean;
  /** The key's record when replayed; null otherwise. */
  operation: string | null;
  fingerprint: string | null;
  /** The write's result: new, or stored under the key. */
  result: T | null;
  /** What an earlier version stored under the key, already presented (`result` is then null). */
  response: unknown;
}

/**
 * A row from its JSON (`to_jsonb(row)`), with the named timestamp columns made Dates as the driver
 * would make them (millisecond precision).
 */
export function datesIn(json: Record<string, unknown>, columns: readonly string[]): Record<string, unknown> {
  const row = { ...json };
  for (const column of columns) {
    const value = row[column];
    if (typeof value === 'string') row[column] = new Date(value);
  }
  return row;
}
