/**
 * Channel values across the checkpoints of one session: how `put` holds a checkpoint's values
 * (a changed value whole, or as a tail on the parent's version when most of its text is the
 * same; an unchanged one as a ref to the checkpoint that holds it) and which checkpoints it so
 * needs, and how a read rebuilds every value of a checkpoint, loading each checkpoint once.
 */
import { type CheckpointStore, MAX_NEEDS, type StateScope } from '@ckpt/core';
import type {
  ChannelVersions,
  Checkpoint,
  SerializerProtocol,
} from '@langchain/langgraph-checkpoint';
import {
  decodeValue,
  type Encoded,
  encodeValue,
  type Held,
  heldWhole,
  neededSeqs,
  record,
  type StoredData,
  storedData,
  type ValueIndex,
  type Version,
} from './stored.js';

/** The text of a channel value the saver last saw, and the checkpoints that rebuild it. */
export interface KnownText {
  type: string;
  text: string;
  /** Seqs of the checkpoints whose entries rebuild it, oldest first; the last holds it. */
  chain: number[];
}

/** Longest chain of tails before a value is held whole again, which bounds a cold read. */
const MAX_CHAIN = 16;
/** A tail pays when it spares at least this many characters. */
const MIN_KEPT = 512;

function commonPrefixLength(a: string, b: string): number {
  // A list that grew: everything but the closing bracket is the same.
  if (a.length > 1 && b.startsWith(a.slice(0, -1))) return a.length - 1;
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/**
 * The entry for a new value `encoded` of a channel whose value at the parent is `before`
 * (when the saver knows its text): a tail on it when that spares most of the text.
 */
function holdValue(version: Version, encoded: Encoded, before: KnownText | undefined): Held {
  const [type, text, form] = encoded;
  if (
    form === undefined &&
    before !== undefined &&
    before.type === type &&
    before.chain.length < MAX_CHAIN
  ) {
    const keep = commonPrefixLength(before.text, text);
    if (keep >= MIN_KEPT && keep * 2 >= text.length) {
      return { v: version, type, tail: text.slice(keep), keep, on: before.chain };
    }
  }
  return heldWhole(version, encoded);
}

/** What a put knows of its parent: where its values are held, and the texts it has of them. */
export interface ParentValues {
  index: ValueIndex;
  texts: Map<string, KnownText>;
  /** Whether it names what it needs: false for a checkpoint written before layout 2. */
  needsKnown: boolean;
}

/** How a checkpoint holds its channel values, and the checkpoints it reads them from. */
export interface HeldValues {
  values: Record<string, Held>;
  refs: Record<string, [Version, number]>;
  /** Seqs of the checkpoints it reads from directly, ascending: its needs in ckpt. */
  needs: number[];
}

/**
 * How `checkpoint`, written on `parent`, holds its values: the channels in `newVersions` as
 * entries of its own (tails on the parent's where that pays), every other channel at the
 * version its parent had as a ref to where the parent's value is held. A checkpoint that would
 * read from more checkpoints than ckpt lets one need, or whose parent was written before layout
 * 2 (which needs what is unknown), holds every value it has whole instead.
 */
export async function holdValues(
  serde: SerializerProtocol,
  checkpoint: Checkpoint,
  newVersions: ChannelVersions,
  parent: ParentValues | null,
): Promise<HeldValues> {
  if (parent !== null && !parent.needsKnown) {
    return entriesAndRefs(serde, checkpoint, checkpoint.channel_versions, parent, false);
  }
  const held = await entriesAndRefs(serde, checkpoint, newVersions, parent, true);
  return held.needs.length <= MAX_NEEDS
    ? held
    : entriesAndRefs(serde, checkpoint, checkpoint.channel_versions, parent, false);
}

async function entriesAndRefs(
  serde: SerializerProtocol,
  checkpoint: Checkpoint,
  changed: ChannelVersions,
  parent: ParentValues | null,
  tails: boolean,
): Promise<HeldValues> {
  const values = record<Held>();
  for (const [channel, version] of Object.entries(changed)) {
    if (Object.hasOwn(checkpoint.channel_values, channel)) {
      const encoded = await encodeValue(serde, checkpoint.channel_values[channel]);
      const before = tails ? parent?.texts.get(channel) : undefined;
      values[channel] = holdValue(version, encoded, before);
    }
  }
  const refs = record<[Version, number]>();
  for (const [channel, version] of Object.entries(checkpoint.channel_versions)) {
    const at = parent?.index[channel];
    if (!Object.hasOwn(values, channel) && at !== undefined && at[0] === version) {
      refs[channel] = at;
    }
  }
  return { values, refs, needs: neededSeqs(values, refs) };
}

/** The chain a value held by `held` at `seq` is rebuilt from. */
export function chainOf(held: Held, seq: number): number[] {
  return 'on' in held ? [...held.on, seq] : [seq];
}

/** Values of pruned checkpoints that kept ones read, as the saver set them aside before layout 2. */
type Carried = Record<string, Record<string, Held>>;

/**
 * Reads the channel values of one session's checkpoints, loading each checkpoint once. Before
 * layout 2 the saver's prune set aside, in the state key `carried`, the values of checkpoints
 * it removed that kept ones still read; a value whose checkpoint is gone is looked for there.
 */
export class ValueReader {
  readonly #store: CheckpointStore;
  readonly #sessionId: string;
  readonly #serde: SerializerProtocol;
  readonly #carriedValues: () => Promise<unknown>;
  readonly #loads = new Map<number, Promise<StoredData | null>>();
  #carried: Promise<Carried> | undefined;

  constructor(
    store: CheckpointStore,
    sessionId: string,
    serde: SerializerProtocol,
    carried: { state: StateScope; key: string },
  ) {
    this.#store = store;
    this.#sessionId = sessionId;
    this.#serde = serde;
    this.#carriedValues = () => carried.state.get(carried.key);
  }

  /** The stored data of the checkpoint at `seq`, or null when it is not stored. */
  load(seq: number): Promise<StoredData | null> {
    let loading = this.#loads.get(seq);
    if (loading === undefined) {
      loading = this.#store
        .load(this.#sessionId, seq)
        .then((found) => (found === null ? null : storedData(found.data)));
      this.#loads.set(seq, loading);
    }
    return loading;
  }

  /**
   * The entry for `channel` at `seq`: the checkpoint's own, or the one set aside when it was
   * pruned before layout 2; undefined when neither is there.
   */
  async held(seq: number, channel: string): Promise<Held | undefined> {
    const stored = await this.load(seq);
    if (stored !== null) {
      return Object.hasOwn(stored.values, channel) ? stored.values[channel] : undefined;
    }
    this.#carried ??= this.#carriedValues().then((value) =>
      typeof value === 'object' && value !== null && !Array.isArray(value)
        ? (value as unknown as Carried)
        : {},
    );
    const carried = (await this.#carried)[seq];
    return carried !== undefined && Object.hasOwn(carried, channel) ? carried[channel] : undefined;
  }

  /** The serialized value `held` stands for, or undefined when what rebuilds it is gone. */
  async encoded(channel: string, held: Held): Promise<Encoded | undefined> {
    if ('text' in held) return [held.type, held.text];
    if ('base64' in held) return [held.type, held.base64, 'base64'];
    const bases = await Promise.all(held.on.map((seq) => this.held(seq, channel)));
    let text: string | undefined;
    for (const base of bases) {
      if (base === undefined || 'base64' in base) text = undefined;
      else if ('text' in base) text = base.text;
      else if (text !== undefined) text = text.slice(0, base.keep) + base.tail;
    }
    return text === undefined ? undefined : [held.type, text.slice(0, held.keep) + held.tail];
  }

  /**
   * Every channel value of `stored` (at `seq`), and the texts of those held as text, which the
   * saver keeps for the next `put` on it.
   */
  async values(
    stored: StoredData,
    seq: number,
  ): Promise<{ values: Record<string, unknown>; texts: Map<string, KnownText> }> {
    const values: Record<string, unknown> = {};
    const texts = new Map<string, KnownText>();
    const resolve = async (channel: string, held: Held | undefined, at: number) => {
      if (held === undefined) return;
      const encoded = await this.encoded(channel, held);
      if (encoded === undefined) return;
      if (encoded.length === 2)
        texts.set(channel, { type: encoded[0], text: encoded[1], chain: chainOf(held, at) });
      // defineProperty: a channel named __proto__ is a plain key, as JSON.parse makes it.
      Object.defineProperty(values, channel, {
        value: await decodeValue(this.#serde, encoded),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    };
    await Promise.all([
      ...Object.entries(stored.values).map(([channel, held]) => resolve(channel, held, seq)),
      ...Object.entries(stored.refs).map(async ([channel, [, at]]) =>
        resolve(channel, await this.held(at, channel), at),
      ),
    ]);
    return { values, texts };
  }
}
