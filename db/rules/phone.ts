/**
 * Customer phones: a valid Indian mobile is 10 digits starting 6–9, optionally prefixed +91
 * (CONTRACT.md). Stored and shown as +91XXXXXXXXXX.
 */
import { z } from 'zod';

const INDIAN_MOBILE = /^(?:\+91)?([6-9]\d{9})$/;

/** The canonical +91XXXXXXXXXX form, or undefined when `input` is not a valid Indian mobile. */
export function normalizePhone(input: string): string | undefined {
  const match = INDIAN_MOBILE.exec(input.trim());
  return match ? `+91${match[1]}` : undefined;
}

/** A zod schema that accepts a valid Indian mobile and outputs its canonical form. */
export const Phone = z
  .string()
  .max(20)
  // The same rule as normalizePhone, written as a pattern so the OpenAPI document states it too.
  .regex(/^\s*(?:\+91)?[6-9]\d{9}\s*$/, 'must be a 10-digit Indian mobile starting 6-9, optionally +91')
  .transform((value) => normalizePhone(value)!)
  .meta({
    description: 'Indian 10-digit mobile, optional +91 prefix; returned as +91XXXXXXXXXX.',
    example: '+919812345678',
  });
