/**
 * Texts a store could be handed, in and out of the encoded form, each an edge of storedBytesOf
 * and of what the server makes of its bytes: shared by the upgrade's conversion test and the
 * test of reads as text.
 */
import { randomBytes } from 'node:crypto';

const payload = randomBytes(300).toString('base64');

export const ODD_TEXTS = [
  '{"a":1}',
  '"é 😀"',
  '[]',
  '""',
  `ckpt1;gzip;;${payload}`,
  `ckpt1;gzip,aes-256-gcm:k1;sess%C3%A9;${payload}`,
  'ckpt1;gzip;;',
  'ckpt1;;;',
  'ckpt1;gzip;;aQ==',
  'ckpt1;gzip;;ab==', // bits after the last byte: not canonical
  'ckpt1;gzip;;abc', // no whole base64
  'ckpt1;gzip;;aQ-_', // base64url
  'ckpt1;gzip;;aQ==\n',
  `ckpt1;gzip;;${payload.slice(0, 76)}\n${payload.slice(76)}`,
  'ckpt1;a;b;c;aQ==', // a third field
  'ckpt1;é;;aQ==',
  'ckpt1;x\ty;;aQ==',
  'Ckpt1;gzip;;aQ==',
  '"ckpt1;gzip;;aQ=="',
];
