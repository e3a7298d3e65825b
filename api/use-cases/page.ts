/**
 * Keyset pages (GET /bookings, GET /events): read one row more than the page holds; that row,
 * if there is one, is what `has_more` says, so a page that ends at the last match answers false.
 */
export function pageOf<T>(rows: readonly T[], limit: number): { rows: T[]; hasMore: boolean } {
  return { rows: rows.slice(0, limit), hasMore: rows.length > limit };
}
