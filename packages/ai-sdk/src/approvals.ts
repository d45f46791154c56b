/**
 * Tool approval decisions, recorded once. A tool part waiting in `approval-requested` is saved
 * with its turn; the decision on it is kept beside the chat, in a ckpt state scope, one value
 * per chat mapping approval ids to decisions, written with compare-and-set (`update`). A
 * different decision on the same approval id, from another tab or another server process, is
 * refused with CONFLICT before any tool runs; the same decision again is a retry (the request
 * that carried it may have been cut off by a crash before its turn was saved) and is kept as it
 * was recorded. Loads show a recorded decision on the part it answers, so a decision outlives a
 * crash between the decision and the save of the tool's outcome.
 */
import { CkptError, type JsonValue, type StateScope } from '@ckpt/core';
import { isToolUIPart, type UIMessage } from 'ai';

/** A decision on one tool approval. */
export interface ApprovalDecision {
  /** The approval's id (`part.approval.id`). */
  approvalId: string;
  approved: boolean;
  /** Why, when the person deciding said. */
  reason?: string;
  /** When the decision was recorded. */
  decidedAt: Date;
}

/** A decision as the state scope holds it. */
interface StoredDecision {
  approved: boolean;
  reason?: string;
  decidedAt: string;
}

type StoredDecisions = Record<string, StoredDecision>;

/** The decisions recorded for the chat in `sessionId`, by approval id. */
export async function readDecisions(
  scope: StateScope,
  sessionId: string,
): Promise<Map<string, ApprovalDecision>> {
  const stored = (await scope.get(sessionId)) as unknown as StoredDecisions | undefined;
  const decisions = new Map<string, ApprovalDecision>();
  for (const [approvalId, decision] of Object.entries(stored ?? {})) {
    decisions.set(approvalId, toDecision(approvalId, decision));
  }
  return decisions;
}

/**
 * Record each decision (`approved`, and `reason`) for its approval id, all or none. A decision
 * already recorded the same is a retry: it stays as it was (its `decidedAt` too). When another
 * decision is recorded for any of them, CONFLICT, and nothing changes.
 */
export async function recordDecisions(
  scope: StateScope,
  sessionId: string,
  decisions: { approvalId: string; approved: boolean; reason?: string }[],
): Promise<ApprovalDecision[]> {
  const decidedAt = new Date().toISOString();
  const entries = decisions.map((decision) => {
    const { approvalId, approved, reason } = checkDecision(decision);
    const entry: StoredDecision = { approved, decidedAt };
    if (reason !== undefined) entry.reason = reason;
    return [approvalId, entry] as const;
  });
  if (entries.length === 0) return [];
  let kept: StoredDecisions = {};
  await scope.update(sessionId, (current) => {
    const recorded = { ...((current ?? {}) as unknown as StoredDecisions) };
    for (const [approvalId, entry] of entries) {
      const earlier = recorded[approvalId];
      if (earlier === undefined) recorded[approvalId] = entry;
      else if (!sameDecision(earlier, entry)) throw alreadyDecided(approvalId, earlier);
    }
    kept = recorded;
    return recorded as unknown as JsonValue;
  });
  return entries.map(([approvalId]) => toDecision(approvalId, kept[approvalId]!));
}

/** Whether two decisions say the same: a retry of one, not another. */
function sameDecision(a: StoredDecision, b: StoredDecision): boolean {
  return a.approved === b.approved && a.reason === b.reason;
}

/** CONFLICT for another decision on `approvalId`. */
export function alreadyDecided(approvalId: string, earlier?: StoredDecision): CkptError {
  const what = earlier
    ? `was already ${earlier.approved ? 'approved' : 'denied'} at ${earlier.decidedAt}`
    : 'was already answered and its tool has run';
  return new CkptError(
    'CONFLICT',
    `tool approval ${JSON.stringify(approvalId)} ${what}; ${earlier ? 'a different decision is refused' : 'a second decision is refused, so the tool does not run twice'}. Reload the chat to see its outcome.`,
    {
      details: {
        argument: 'approvalId',
        ...(earlier ? { decision: toDecision(approvalId, earlier) as unknown as JsonValue } : {}),
      },
    },
  );
}

/**
 * `message` with each tool part that waits in `approval-requested` for a decision recorded
 * since shown as `approval-responded` with that decision; the approval's other fields (its
 * `signature` among them) are kept. The same message when nothing applies.
 */
export function withDecisions(
  message: UIMessage,
  decisions: Map<string, ApprovalDecision>,
): UIMessage {
  if (decisions.size === 0) return message;
  let changed = false;
  const parts = message.parts.map((part) => {
    if (!isToolUIPart(part) || part.state !== 'approval-requested') return part;
    const decision = decisions.get(part.approval.id);
    if (decision === undefined) return part;
    changed = true;
    const approval = { ...part.approval, approved: decision.approved } as Record<string, unknown>;
    if (decision.reason !== undefined) approval.reason = decision.reason;
    return { ...part, state: 'approval-responded', approval } as unknown as typeof part;
  });
  return changed ? { ...message, parts } : message;
}

/** The decisions a message from the browser carries: its parts in `approval-responded`. */
export function answeredApprovals(
  message: UIMessage,
): { approvalId: string; approved: boolean; reason?: string }[] {
  const answered: { approvalId: string; approved: boolean; reason?: string }[] = [];
  for (const part of message.parts) {
    if (!isToolUIPart(part) || part.state !== 'approval-responded') continue;
    const { id, approved, reason } = part.approval;
    answered.push(
      reason === undefined ? { approvalId: id, approved } : { approvalId: id, approved, reason },
    );
  }
  return answered;
}

function toDecision(approvalId: string, stored: StoredDecision): ApprovalDecision {
  const decision: ApprovalDecision = {
    approvalId,
    approved: stored.approved,
    decidedAt: new Date(stored.decidedAt),
  };
  if (stored.reason !== undefined) decision.reason = stored.reason;
  return decision;
}

function checkDecision(decision: { approvalId: string; approved: boolean; reason?: string }): {
  approvalId: string;
  approved: boolean;
  reason?: string;
} {
  const refuse = (argument: string, message: string) =>
    new CkptError('INVALID_ARGUMENT', message, { details: { argument } });
  if (typeof decision?.approvalId !== 'string' || decision.approvalId === '') {
    throw refuse(
      'approvalId',
      'approvalId must be the non-empty id of the approval (part.approval.id).',
    );
  }
  if (typeof decision.approved !== 'boolean') {
    throw refuse('approved', 'approved must be true or false.');
  }
  if (decision.reason !== undefined && typeof decision.reason !== 'string') {
    throw refuse('reason', 'reason must be a string when given.');
  }
  return decision;
}

/** The state of the tool part of `message` that asked for approval `approvalId`, if any. */
export function approvalState(message: UIMessage, approvalId: string): string | undefined {
  for (const part of message.parts) {
    if (isToolUIPart(part) && part.approval?.id === approvalId) return part.state;
  }
  return undefined;
}
