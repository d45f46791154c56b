/**
 * The tree of a chat's messages, across every branch. Each checkpoint adds its messages after
 * the last message of the checkpoint it was written on (its branch's tail); a message repeated
 * where a branch starts stays one node, and a new version of a message (the same id again,
 * further down its branch) changes that node, not the tree. The shape is known from the
 * checkpoints' metadata alone (`list`), so that siblings and branch switches read no message;
 * the export reads every message once (`exportSession`).
 */
import { allItems, type CheckpointStore, CkptError, isCkptError } from '@ckpt/core';
import { readMetadata } from './checkpoints.js';
import { fromItem, type StoredMessage } from './records.js';

/** One message of the tree. */
export interface TreeNode {
  id: string;
  parentId: string | null;
  /** Its place in the order the messages were first stored. */
  order: number;
}

/** A checkpoint as the tree is built from it. */
interface TreeCheckpoint {
  seq: number;
  parent: number | null;
  ids: string[];
}

/** A chat's tree: its messages, the checkpoints that hold each, and each checkpoint's tail. */
export class MessageTree {
  readonly nodes = new Map<string, TreeNode>();
  /** For each checkpoint, the message its branch ends with (null: none yet). */
  readonly tails = new Map<number, string | null>();
  /** For each message, the checkpoints that store it (first, repeated, or in a new version). */
  readonly holders = new Map<string, number[]>();
  readonly #children = new Map<number | null, number[]>();

  /** Add the checkpoints, each after its parent (seq ascending does that). */
  constructor(checkpoints: Iterable<TreeCheckpoint>) {
    for (const { seq, parent, ids } of checkpoints) {
      // A parent pruned away leaves its branch starting from nothing.
      let tail = parent === null ? null : (this.tails.get(parent) ?? null);
      for (const id of ids) {
        const node = this.nodes.get(id);
        if (node === undefined) {
          this.nodes.set(id, { id, parentId: tail, order: this.nodes.size });
          tail = id;
        } else if (node.parentId === tail) {
          tail = id; // repeated where a branch starts
        } // else a new version of a message already on the branch: the tail stays
        const holders = this.holders.get(id);
        if (holders === undefined) this.holders.set(id, [seq]);
        else holders.push(seq);
      }
      this.tails.set(seq, tail);
      const siblings = this.#children.get(parent);
      if (siblings === undefined) this.#children.set(parent, [seq]);
      else siblings.push(seq);
    }
  }

  /** The messages with the same parent as `id`, itself included, oldest first. */
  siblingsOf(id: string): string[] {
    const node = this.nodes.get(id);
    if (node === undefined) return [];
    return [...this.nodes.values()]
      .filter((other) => other.parentId === node.parentId)
      .sort((a, b) => a.order - b.order)
      .map((other) => other.id);
  }

  /** The messages that have a message after them on some branch. */
  parents(): Set<string> {
    const parents = new Set<string>();
    for (const node of this.nodes.values()) if (node.parentId !== null) parents.add(node.parentId);
    return parents;
  }

  /**
   * The checkpoint to make the head to show the branch holding `id`: of the checkpoints whose
   * branch holds it, the one written last (what was last seen on that branch). Undefined when
   * no checkpoint holds it.
   */
  newestHolding(id: string): number | undefined {
    const start = this.holders.get(id);
    if (start === undefined) return undefined;
    let newest = -1;
    const stack = [...start];
    while (stack.length > 0) {
      const seq = stack.pop()!;
      if (seq > newest) newest = seq;
      stack.push(...(this.#children.get(seq) ?? []));
    }
    return newest;
  }
}

/** The tree of the chat in `sessionId` from its checkpoints' metadata, with its head. */
export async function treeShape(
  store: CheckpointStore,
  sessionId: string,
): Promise<{ tree: MessageTree; head: number } | null> {
  const info = await store.info(sessionId);
  if (info === null) return null;
  const checkpoints: TreeCheckpoint[] = [];
  for await (const cp of allItems((cursor) => store.list(sessionId, { limit: 1000, cursor }))) {
    checkpoints.push({ seq: cp.seq, parent: cp.parent, ids: readMetadata(cp.metadata).ids });
  }
  return { tree: new MessageTree(checkpoints.reverse()), head: info.head };
}

/** The whole tree of the chat in `sessionId` with each message's newest stored version. */
export async function treeWithMessages(
  store: CheckpointStore,
  sessionId: string,
): Promise<{ tree: MessageTree; head: number; records: Map<string, StoredMessage> } | null> {
  // An export that meets a write fails with CONFLICT rather than giving a torn tree: read again.
  for (let attempt = 1; ; attempt++) {
    try {
      const exported = await store.exportSession(sessionId);
      if (exported === null) return null;
      const checkpoints: TreeCheckpoint[] = [];
      const records = new Map<string, StoredMessage>();
      for await (const cp of exported.checkpoints) {
        const stored = cp.transcript.map(fromItem).filter((r): r is StoredMessage => r !== null);
        // Later checkpoints hold newer versions.
        for (const record of stored) records.set(record.message.id, record);
        checkpoints.push({ seq: cp.seq, parent: cp.parent, ids: stored.map((r) => r.message.id) });
      }
      return { tree: new MessageTree(checkpoints), head: exported.head, records };
    } catch (err) {
      if (!isCkptError(err, 'CONFLICT') || attempt >= 5) throw err;
    }
  }
}

/** NOT_FOUND for a message id the chat does not hold. */
export function unknownMessage(chatId: string, messageId: string): CkptError {
  return new CkptError(
    'NOT_FOUND',
    `chat ${JSON.stringify(chatId)} has no message ${JSON.stringify(messageId)} on any branch.`,
    { details: { argument: 'messageId' } },
  );
}
