/**
 * Stable slot ids: the same resource and start always give the same uuid, computed, not stored
 * (a version-5-style name-based uuid over "resource_id/start epoch ms").
 */
import { createHash } from 'node:crypto';

/** The slot id of the slot of `resourceId` that starts at `start`. */
export function slotId(resourceId: string, start: Date): string {
  const hash = createHash('sha1')
    .update(`booking-slot:${resourceId.toLowerCase()}/${start.getTime()}`)
    .digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50; // version 5
  hash[8] = (hash[8]! & 0x3f) | 0x80; // RFC 4122 variant
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
