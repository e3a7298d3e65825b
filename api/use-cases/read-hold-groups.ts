/** Reads of one's own hold groups; allowed after a grant is withdrawn (CONTRACT.md). */
import type { Knex } from '../../db/postgres/knex.ts';
import * as holdGroups from '../../db/queries/hold-groups.ts';
import { HoldGroupNotFoundError, NotOwnerError } from '../errors.ts';

/** One of the caller's groups as it is now: 404 when missing, 403 when another partner's. */
export async function getHoldGroup(
  db: Knex,
  partnerId: string,
  holdGroupId: string,
): Promise<holdGroups.HoldGroup> {
  const group = await holdGroups.find(db, holdGroupId);
  if (!group) throw new HoldGroupNotFoundError();
  if (group.group.partner_id !== partnerId) throw new NotOwnerError('hold group');
  return group;
}
