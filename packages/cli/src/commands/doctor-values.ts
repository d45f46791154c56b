/**
 * What `ckpt doctor` finds of the values a store holds: it reads a sample (the head checkpoint
 * of the newest sessions, and some state values) with the codecs it was given, and reports the
 * values it cannot read (a key it was not given, a key under that name that is not the one that
 * sealed them, a codec this version does not know), or which codecs and keys it read them with.
 * It names keys, never their bytes.
 */
import type { CheckpointStore, Diagnosis } from '@ckpt/core';
import { isCkptError } from '@ckpt/core';
import { codecLabelsOf } from '@ckpt/core/adapter';
import { count } from '../io.js';

/** How many of the newest sessions have their head checkpoint read. */
export const SAMPLED_SESSIONS = 20;
/** How many state scopes, and keys of each, are read. */
const SAMPLED_SCOPES = 5;
const SAMPLED_KEYS = 4;
/** How many places a finding names. */
const PLACES_NAMED = 3;

/** A finding of doctor on values, with what a script needs in `--json`. */
export interface ValuesDiagnosis extends Diagnosis {
  /** The key names the finding is about (never their bytes). */
  keys?: string[];
  /** The codecs the finding is about, as stored values record them (`gzip`, `aes-256-gcm`). */
  codecs?: string[];
  /** Where some of the values are: `session "x" checkpoint 3`, `state key "k" of scope "s"`. */
  at?: string[];
}

/** One value read: where it is, what made it, and why it could not be read (if it could not). */
interface Sampled {
  place: string;
  labels: string[];
  failure?: { reason: string; key?: string; codec?: string };
}

/** The value at `place`: its stored text's codecs, and whether `read` reads it. */
async function sample(place: string, stored: string, read: () => Promise<unknown>) {
  const found: Sampled = { place, labels: codecLabelsOf(stored) };
  try {
    await read();
  } catch (err) {
    if (!isCkptError(err, 'UNREADABLE')) throw err;
    const { reason, key, codec } = err.details as Record<string, unknown>;
    found.failure = {
      reason: String(reason),
      ...(typeof key === 'string' && { key }),
      ...(typeof codec === 'string' && { codec }),
    };
  }
  return found;
}

/** The head checkpoint's data of the newest sessions, and some state values. */
async function sampleValues(store: CheckpointStore): Promise<Sampled[]> {
  const found: Sampled[] = [];
  if (store.capabilities.listSessions) {
    const { items } = await store.sessions({ limit: SAMPLED_SESSIONS });
    for (const session of items) {
      const stored = await store.backend.load(session.sessionId, null);
      if (stored === null) continue;
      const place = `session ${JSON.stringify(session.sessionId)} checkpoint ${stored.seq}`;
      found.push(await sample(place, stored.data, () => store.load(session.sessionId)));
    }
  }
  if (store.capabilities.listStateKeys) {
    const scopes = await store.stateScopes({ limit: SAMPLED_SCOPES });
    for (const scope of scopes.items) {
      const keys = await store.state(scope).keys({ limit: SAMPLED_KEYS });
      for (const key of keys.items) {
        const stored = await store.backend.stateGet(scope, key);
        if (stored === undefined) continue;
        const place = `state key ${JSON.stringify(key)} of scope ${JSON.stringify(scope)}`;
        found.push(await sample(place, stored, () => store.state(scope).get(key)));
      }
    }
  }
  return found;
}

const unique = (names: (string | undefined)[]) =>
  [...new Set(names.filter((n): n is string => n !== undefined))].sort();
const quoted = (names: string[]) => names.map((n) => JSON.stringify(n)).join(', ');
const places = (values: Sampled[]) => values.slice(0, PLACES_NAMED).map((v) => v.place);
const where = (values: Sampled[]) =>
  `${places(values).join('; ')}${values.length > PLACES_NAMED ? '; …' : ''}`;

/** A codec label as a person reads it: `aes-256-gcm:k2` is `aes-256-gcm with key k2`. */
function madeWith(labels: string[]): string {
  if (labels.length === 0) return 'plain JSON';
  return labels
    .map((label) => {
      const at = label.indexOf(':');
      return at === -1 ? label : `${label.slice(0, at)} with key ${label.slice(at + 1)}`;
    })
    .join(' + ');
}

const TAKES_KEYS = 'CKPT_KEYS, or a key file: --key-file or CKPT_KEY_FILE';

/** The words a finding on one value, or on more, is said with. */
interface Verbs {
  are: string;
  were: string;
  they: string;
  them: string;
}
const ONE: Verbs = { are: 'is', were: 'was', they: 'it', them: 'it' };
const MANY: Verbs = { are: 'are', were: 'were', they: 'they', them: 'them' };

/**
 * The findings on the values of `store`, read with the keys named `given`: one per kind of
 * value it cannot read, or one saying what it read them with.
 */
export async function diagnoseValues(
  store: CheckpointStore,
  given: string[],
): Promise<ValuesDiagnosis[]> {
  const sampled = await sampleValues(store);
  const described = `the ${count(sampled.length, 'value')} sampled`;
  const found: ValuesDiagnosis[] = [];
  /** A failed check on `values`: how many of the sample, what, where, and what to do. */
  const fail = (
    values: Sampled[],
    what: (keysOrCodecs: string[], verbs: Verbs) => { detail: string; fix: string },
    about: 'keys' | 'codecs' | null,
  ) => {
    if (values.length === 0) return;
    const named =
      about === null
        ? []
        : unique(values.map((v) => v.failure?.[about === 'keys' ? 'key' : 'codec']));
    const { detail, fix } = what(named, values.length === 1 ? ONE : MANY);
    found.push({
      check: 'values',
      status: 'fail',
      detail: `${values.length} of ${described} ${detail} (${where(values)}).`,
      fix,
      ...(about !== null && { [about]: named }),
      at: places(values),
    });
  };
  const failing = (reason: string) => sampled.filter((v) => v.failure?.reason === reason);
  const one = (names: string[], singular: string, plural: string) =>
    names.length === 1 ? singular : plural;

  fail(
    failing('key'),
    (keys, v) => ({
      detail: `${v.are} encrypted under ${one(keys, 'key', 'keys')} ${quoted(keys)}, and ${given.length === 0 ? 'no keys were given' : `the keys given are ${quoted(given)}`}; ${v.they} cannot be read`,
      fix: `give ckpt (and every application on this store) the ${one(keys, 'key', 'keys')} ${quoted(keys)}, with the others, through ${TAKES_KEYS}; a key that is lost leaves what it sealed unreadable.`,
    }),
    'keys',
  );
  fail(
    failing('authentication'),
    (keys, v) => ({
      detail: `failed authentication under ${one(keys, 'key', 'keys')} ${quoted(keys)}: the key given under that name is not the one that sealed ${v.them}, or ${v.they} ${v.were} changed after ${v.they} ${v.were} written`,
      fix: `check the ${one(keys, 'key', 'keys')} given as ${quoted(keys)} (${TAKES_KEYS}) against the ${one(keys, 'one', 'ones')} the applications seal with; if ${one(keys, 'it is', 'they are')} right, these values were changed in the store: restore them from a backup.`,
    }),
    'keys',
  );
  fail(
    failing('codec'),
    (codecs, v) => ({
      detail: `${v.were} made by ${one(codecs, 'codec', 'codecs')} ${quoted(codecs)}, which this version of ckpt (or this Node, ${process.version}) cannot read`,
      fix: 'run a version of @ckpt/cli (and a Node) as new as those of the applications that wrote these values.',
    }),
    'codecs',
  );
  fail(
    sampled.filter(
      (v) =>
        v.failure !== undefined && !['key', 'authentication', 'codec'].includes(v.failure.reason),
    ),
    (_, v) => ({
      detail: `${v.are} damaged, or ${v.were} moved from another session after ${v.they} ${v.were} written`,
      fix: 'restore these values from a backup, or delete what holds them.',
    }),
    null,
  );

  if (found.length > 0) return found;
  const labels = sampled.map((v) => v.labels);
  const keys = unique(
    labels.flat().map((l) => (l.includes(':') ? l.slice(l.indexOf(':') + 1) : undefined)),
  );
  const codecs = unique(labels.flat().map((l) => l.split(':')[0]));
  const tally = new Map<string, number>();
  for (const made of labels.map(madeWith)) tally.set(made, (tally.get(made) ?? 0) + 1);
  const seen = [...tally].map(([made, n]) => `${n} ${made}`).join(', ');
  const plain = sampled.filter((v) => v.labels.length === 0);
  // Plain values beside sealed ones, or where keys are meant to seal, are what encryption was
  // meant to keep from whoever reads the store.
  const encrypted = labels.flat().some((l) => l.includes(':'));
  if (plain.length > 0 && (encrypted || given.length > 0)) {
    const v = plain.length === 1 ? ONE : MANY;
    return [
      {
        check: 'values',
        status: 'warn',
        detail: `${plain.length} of ${described} ${v.are} plain JSON, not encrypted, in a store ${encrypted ? 'that also holds encrypted values' : 'given keys'} (${where(plain)}); read: ${seen}.`,
        fix: `run ckpt rekey with the keys (${TAKES_KEYS}) to encrypt them.`,
        keys,
        codecs,
        at: places(plain),
      },
    ];
  }
  return [
    {
      check: 'values',
      status: 'ok',
      detail:
        sampled.length === 0
          ? 'no values stored to sample'
          : `${described} (the head checkpoints of the newest sessions, and state values) read: ${seen}`,
      keys,
      codecs,
    },
  ];
}
