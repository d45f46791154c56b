/**
 * A session: its summary, its tree, and beside it the picked checkpoint (with its diff) or the
 * transcript. It follows the session live: a checkpoint written by an agent, a rollback or a
 * prune elsewhere shows without a reload. With `--write`, the changes, each asked first.
 */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api } from './api.js';
import { CheckpointPanel } from './checkpoint-panel.js';
import { ask } from './confirm.js';
import { useSessionLive } from './live.js';
import { DoneNote, ErrorNote } from './notes.js';
import { Link, navigate, pathOf, type Route, sessionPath, taggedPath } from './router.js';
import { TagList } from './tag-filter.js';
import { ago, shortTime } from './time.js';
import { hasCheckpoint } from './topology.js';
import { TranscriptPanel } from './transcript-panel.js';
import { TreeView } from './tree-view.js';
import type { SessionInfo, SessionTopology } from './wire.js';

type SessionRoute = Extract<Route, { view: 'session' }>;

/** The views beside the tree. */
const TABS: [SessionRoute['tab'], string][] = [
  ['checkpoint', 'Checkpoint'],
  ['transcript', 'Transcript'],
];

const plural = (n: number, word: string) =>
  `${n.toLocaleString('en')} ${word}${n === 1 ? '' : 's'}`;

const samePrint = (a: SessionInfo, b: SessionInfo) =>
  a.head === b.head && a.checkpoints === b.checkpoints && a.updatedAt === b.updatedAt;

/**
 * What a change did. A rollback's note names the head it left, which stops being true when
 * the head moves on (an agent writing, a rollback elsewhere): `after` is the last read of the
 * tree begun before it, so that a tree read after it tells whether the head is still there.
 */
interface Done {
  text: string;
  rolledBack?: { seq: number; after: number };
}

/** The note for `done` beside the tree of the `read`-th read, whose head is `head`. */
function doneText(id: string, done: Done, read: number, head: number | null): string {
  const rolled = done.rolledBack;
  if (rolled === undefined || read <= rolled.after || head === null || head === rolled.seq) {
    return done.text;
  }
  return `Rolled back "${id}" to checkpoint ${rolled.seq}; the head has moved since, and is now checkpoint ${head}.`;
}

/** The view of one session. */
export function SessionView({ route, write }: { route: SessionRoute; write: boolean }) {
  const { id } = route;
  const [tree, setTree] = useState<SessionTopology | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [gone, setGone] = useState(false);
  const [done, setDone] = useState<Done | null>(null);
  const [picking, setPicking] = useState(false);
  /** Goes up each time the session changed, so that the panels read again. */
  const [version, setVersion] = useState(0);
  const loading = useRef<{ id: string; again: boolean } | null>(null);
  /** The session's summary as the live updates last told it. */
  const told = useRef<SessionInfo | null>(null);
  /** How many reads of the tree were begun, and which of them the tree on screen is. */
  const reads = useRef({ begun: 0, shown: 0 });

  const load = useCallback(() => {
    // One read at a time: a change while one is on its way reads once more after it.
    if (loading.current?.id === id) {
      loading.current.again = true;
      return;
    }
    const current = { id, again: false };
    loading.current = current;
    const read = ++reads.current.begun;
    api
      .topology(id)
      .then((t) => {
        if (loading.current !== current) return;
        // A change told of while this read was on its way, and not in it, is read next.
        if (told.current !== null && !samePrint(told.current, t.info)) current.again = true;
        reads.current.shown = read;
        setTree(t);
        setGone(false);
        setError(null);
        setVersion((v) => v + 1);
      })
      .catch((err: unknown) => {
        if (loading.current === current) setError(err);
      })
      .finally(() => {
        if (loading.current !== current) return;
        loading.current = null;
        if (current.again) load();
      });
  }, [id]);

  useEffect(() => {
    setTree(null);
    setError(null);
    setDone(null);
    setPicking(false);
    loading.current = null;
    load();
  }, [load]);

  useSessionLive(id, (info) => {
    if (info === null) {
      if (tree !== null) setGone(true);
      return;
    }
    told.current = info;
    // A read on its way is checked against what was told when it lands.
    if (loading.current !== null) return;
    if (tree === null || !samePrint(info, tree.info)) load();
  });

  const go = (changes: Partial<SessionRoute>) => navigate(pathOf({ ...route, ...changes }), true);
  const info = tree?.info ?? null;
  const selected = route.seq ?? info?.head ?? null;
  const stored = tree !== null && selected !== null && hasCheckpoint(tree, selected);

  const run = async (what: () => Promise<Done>) => {
    setError(null);
    setDone(null);
    try {
      setDone(await what());
    } catch (err) {
      setError(err);
    }
    load();
  };

  const rollback = async (seq: number) => {
    if (!info) return;
    const ok = await ask({
      title: 'Roll back',
      message: `Move the head of session "${id}" from checkpoint ${info.head} to checkpoint ${seq}. Nothing is deleted: rolling forward to ${info.head} again works.`,
      confirm: `Roll back to ${seq}`,
    });
    if (ok === null) return;
    await run(async () => {
      await api.rollback(id, seq, info.head);
      go({ seq: null, vs: null });
      return {
        text: `Rolled back: the head of "${id}" is now checkpoint ${seq}.`,
        rolledBack: { seq, after: reads.current.begun },
      };
    });
  };

  const fork = async (seq: number) => {
    const newId = await ask({
      title: 'Fork',
      message: (typed) =>
        `Copy checkpoint ${seq} of session "${id}" and its ancestors into a new session ${typed === '' ? 'with a random id' : `"${typed}"`}. "${id}" does not change.`,
      confirm: 'Fork',
      input: { label: 'New session id (empty: a random id)', placeholder: `${id}-fork` },
    });
    if (newId === null) return;
    await run(async () => {
      const made = await api.fork(id, seq, newId);
      navigate(sessionPath(made.sessionId));
      return { text: `Forked "${id}" at ${seq} into "${made.sessionId}".` };
    });
  };

  const prune = async () => {
    if (!info) return;
    const keep = await ask({
      title: 'Prune',
      message: (typed) =>
        /^\d+$/.test(typed) && Number(typed) >= 1
          ? `Remove every checkpoint of session "${id}" but the ${typed} newest and the head (it has ${plural(info.checkpoints, 'checkpoint')}), with their transcript items. This cannot be undone.`
          : 'How many of the newest checkpoints to keep (1 or more)?',
      confirm: 'Prune',
      danger: true,
      input: { label: 'Checkpoints to keep', initial: '10', required: true },
    });
    if (keep === null) return;
    await run(async () => {
      const { removed } = await api.prune(id, Number(keep));
      return { text: `Pruned "${id}": removed ${plural(removed, 'checkpoint')}.` };
    });
  };

  const remove = async () => {
    if (!info) return;
    const ok = await ask({
      title: 'Delete session',
      message: `Delete session "${id}" with its ${plural(info.checkpoints, 'checkpoint')} on every branch and its transcript. This cannot be undone.`,
      confirm: 'Delete session',
      danger: true,
    });
    if (ok === null) return;
    setError(null);
    try {
      await api.deleteSession(id);
      navigate('/');
    } catch (err) {
      setError(err);
    }
  };

  const pick = (seq: number) => {
    if (picking) {
      setPicking(false);
      go({ vs: seq === selected ? null : seq, tab: 'checkpoint' });
    } else go({ seq, tab: 'checkpoint' });
  };

  return (
    <div class="session">
      <header class="session-head">
        <div class="crumbs">
          <Link href="/">Sessions</Link> /
        </div>
        <h1 class="session-id">{id}</h1>
        {info && (
          <p class="facts">
            head <strong>{info.head}</strong> · {plural(info.checkpoints, 'checkpoint')} · updated{' '}
            <span title={info.updatedAt}>{ago(info.updatedAt)}</span> · created{' '}
            {shortTime(info.createdAt)}
            {info.forkedFrom && (
              <>
                {' '}
                · forked from{' '}
                <Link
                  href={sessionPath(info.forkedFrom.sessionId, info.forkedFrom.seq)}
                  class="fork-from"
                >
                  {info.forkedFrom.sessionId}
                </Link>{' '}
                at {info.forkedFrom.seq}
              </>
            )}
          </p>
        )}
        {info && Object.keys(info.tags).length > 0 && (
          <p class="session-tags">
            tags <TagList tags={info.tags} href={taggedPath} />
          </p>
        )}
        {write && info && (
          <div class="actions">
            <button type="button" onClick={prune}>
              Prune…
            </button>
            <button type="button" class="danger" onClick={remove}>
              Delete session…
            </button>
          </div>
        )}
      </header>
      {gone && (
        <div class="note note-error" role="alert">
          This session was deleted. <Link href="/">Back to the sessions</Link>
        </div>
      )}
      <ErrorNote error={error} />
      <DoneNote text={done && doneText(id, done, reads.current.shown, info?.head ?? null)} />
      {tree && (
        <div class="session-body">
          <div class="tree-pane">
            {picking && <p class="picking">Click the checkpoint to compare {selected} with.</p>}
            <TreeView
              key={tree.info.createdAt}
              topology={tree}
              selected={selected}
              compare={route.vs}
              origin={tree.info.forkedFrom}
              onSelect={pick}
            />
          </div>
          <div class="side-pane">
            <div class="tabs" role="tablist">
              {TABS.map(([tab, label]) => (
                <button
                  key={tab}
                  type="button"
                  role="tab"
                  aria-selected={route.tab === tab}
                  onClick={() => go({ tab })}
                >
                  {label}
                </button>
              ))}
            </div>
            {route.tab === 'transcript' ? (
              <TranscriptPanel id={id} version={version} />
            ) : selected !== null && stored ? (
              <CheckpointPanel
                id={id}
                seq={selected}
                compare={route.vs}
                picking={picking}
                setPicking={setPicking}
                clearCompare={() => go({ vs: null })}
                version={version}
                actions={
                  write && (
                    <>
                      {/* Until the session's head is known, rolling back has no "from". */}
                      {info && selected !== info.head && (
                        <button type="button" onClick={() => rollback(selected)}>
                          Roll back to {selected}
                        </button>
                      )}
                      <button type="button" onClick={() => fork(selected)}>
                        Fork at {selected}…
                      </button>
                    </>
                  )
                }
              />
            ) : (
              <p class="empty">Checkpoint {selected} is not stored (any more).</p>
            )}
          </div>
        </div>
      )}
    </div>
  );
}
