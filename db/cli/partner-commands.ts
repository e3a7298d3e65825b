/**
 * Partners and their API keys: partner:create, partner:list, partner:rate-limit, key:replace (with
 * a grace period for the older keys), key:revoke.
 */
import { z } from 'zod';
import { wholeNumberText } from '../platform/input.ts';
import { generateApiKey, hashApiKey } from '../rules/api-key.ts';
import type { Knex } from '../postgres/knex.ts';
import * as apiKeys from '../queries/api-keys.ts';
import * as partners from '../queries/partners.ts';
import { CommandError, defineCommand, id, isoDateTime, mustExist, text } from './command.ts';

/** The default requests per 60-second window (the spec's Limits). */
export const DEFAULT_RATE_LIMIT = 60;
const rateLimit = wholeNumberText(1, 1_000_000);
/** How long older keys keep working after key:replace commits: up to 30 days; 0 revokes at once. */
const graceSeconds = wholeNumberText(0, 2_592_000);

/** Issues a new key for a partner; the plain key exists only in the return value. */
export async function issueKey(trx: Knex, partnerId: string, expiresAt: Date | null = null): Promise<string> {
  const key = generateApiKey();
  await apiKeys.insert(trx, { partnerId, keyHash: hashApiKey(key), expiresAt });
  return key;
}

export const partnerCommands = [
  defineCommand({
    name: 'partner:create',
    usage: '--name S [--rate-limit N]',
    flags: z.strictObject({ name: text(200), 'rate-limit': rateLimit.optional() }),
    async run(trx, flags) {
      const partnerId = await partners.insert(trx, {
        name: flags.name,
        rateLimit: flags['rate-limit'] ?? DEFAULT_RATE_LIMIT,
      });
      return { partner_id: partnerId, api_key: await issueKey(trx, partnerId) };
    },
  }),
  defineCommand({
    name: 'partner:rate-limit',
    usage: '--partner ID --limit N',
    flags: z.strictObject({ partner: id, limit: rateLimit }),
    async run(trx, flags) {
      mustExist(await partners.setRateLimit(trx, flags.partner, flags.limit), 'partner', flags.partner);
      return { partner_id: flags.partner, rate_limit: flags.limit };
    },
  }),
  defineCommand({
    name: 'partner:list',
    usage: '',
    flags: z.strictObject({}),
    async run(trx) {
      return { partners: await partners.listWithKeys(trx) };
    },
  }),
  defineCommand({
    name: 'key:replace',
    usage: '--partner ID [--expires-at ISO] [--grace-seconds N]',
    flags: z.strictObject({
      partner: id,
      'expires-at': isoDateTime.optional(),
      'grace-seconds': graceSeconds.optional(),
    }),
    async run(trx, flags) {
      // Locked: a second key:replace (or key:revoke) at the same time waits, then sees this one's
      // key among the older ones. Each revoked only the keys committed when it began, so two at
      // once left both new keys live.
      mustExist(await partners.lock(trx, flags.partner), 'partner', flags.partner);
      const expiresAt = flags['expires-at'] ?? null;
      if (expiresAt && expiresAt.getTime() <= Date.now())
        throw new CommandError('--expires-at must be in the future');
      const grace = flags['grace-seconds'] ?? 0;
      // The older keys stop at once, or `grace` seconds after this, the command's last statement.
      if (grace > 0) await apiKeys.expireAllWithin(trx, flags.partner, grace);
      else await apiKeys.revokeAll(trx, flags.partner);
      return { partner_id: flags.partner, api_key: await issueKey(trx, flags.partner, expiresAt) };
    },
  }),
  defineCommand({
    name: 'key:revoke',
    usage: '--partner ID',
    flags: z.strictObject({ partner: id }),
    async run(trx, flags) {
      mustExist(await partners.lock(trx, flags.partner), 'partner', flags.partner);
      return { partner_id: flags.partner, revoked: await apiKeys.revokeAll(trx, flags.partner) };
    },
  }),
];
