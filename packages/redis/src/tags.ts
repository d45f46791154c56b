/**
 * How a session's tags cross into the scripts and back. The scripts keep them as JSON text in
 * the session hash and build the tag index's entries from that text (see TAG_INDEX in
 * statements.ts); a listing by tag finds a tag's entries by where they start.
 */
import type { Tags } from '@ckpt/core/adapter';

/** Tags as the scripts take them: JSON text, `{}` for none (keys ascending, as core gives them). */
export const tagsText = (tags: Tags | undefined): string => JSON.stringify(tags ?? {});

/** Tags as the session hash holds them (JSON text; absent for none). */
export function tagsOfField(field: string | null | undefined): Tags {
  return field ? (JSON.parse(field) as Tags) : {};
}

/**
 * Where the entries of the tag `key`=`value` start in its shard's tag index: a key holds no
 * `=` and a value no NUL, so this start is no other tag's, and no other tag's entries lie
 * between it and the tag's last entry.
 */
export const tagStart = (key: string, value: string): string => `${key}=${value}\0`;
