/**
 * Every Lua script, one per operation. Each runs atomically on the server, touching only the
 * keys it is given (all in one slot: see schema.ts). Seqs travel as decimal strings; times as
 * 15-digit zero-padded milliseconds, so that the catalog's members sort by time as text.
 * A checkpoint's info is `<parent> <createdAt> <metadata>` (parent empty for the first).
 *
 * What a checkpoint needs is `<seq>,<seq>,…` in the needs hash, only for checkpoints that need
 * some: a session without needs has no such key, and prune and fork do no work for them.
 *
 * Every script that moves a head also copies the head checkpoint into the session hash
 * (`hseq`, `hinfo`, `hdata`), so that loading the head is one HMGET and no script. The copy is
 * good while `hseq` equals `head`: checkpoints never change, so a copy can only be of another
 * seq (a head moved by a version that kept no copy), never out of date for its own.
 *
 * A checkpoint's pin is the one thing about it that changes: `hpin` is `<seq> <pin>` (`<pin>`
 * empty when not pinned, see script-values.ts), written by every script that moves the head and
 * by pin and unpin when they change the pin of the copied seq. It names its seq, so that a head
 * moved by a version that kept no `hpin` is read by script, as a head without a copy is.
 *
 * Pins live in the session's pins hash, only while it holds one; scripts return a checkpoint's
 * pin as `''` when it has none (a nil would end the reply's array there).
 *
 * A session's tags are JSON text in its hash (`tags`, only when it has some), and each tag is
 * an entry of its shard's tag index that carries the session's updatedAt (see TAG_INDEX): every
 * script that moves updatedAt moves the entries with it, and every one that removes a session
 * removes them.
 */
import { Script } from './runner.js';
import { KEPT_CHANGES } from './schema.js';

// Record a change in its shard's change log (see change-log.ts), in the script that makes it:
// an entry of the shard's stream, `s` the hex id (or scope), `k` the kind, `q` the seq ('' for
// none). Its id is `<time>-<n>`, the time in microseconds (not the milliseconds of Redis's own
// ids: two changes one caller makes one after the other then never share it, and keep their
// order across shards). It is taken here, never by Redis's clock alone: above the floor that
// readers raised (so that no entry lands below a position a reader already handed out,
// whatever this node's clock or a script's duration) and at or above the stream's last id
// (Redis refuses one below). The stream keeps at least the latest KEPT_CHANGES entries (MAXLEN ~ lets go of
// whole nodes of entries, never the newest). Then it wakes the watchers on the stream's own
// name as a shard channel: in the script's slot, so that it stays on this node of a cluster.
// A server without sharded pub/sub (before Redis 7) only wakes no one.
const LOG_CHANGE = `
local function logChange(stream, floor, hexId, kind, seq)
  local now = redis.call('TIME')
  local us = math.max(tonumber(now[1]) * 1000000 + tonumber(now[2]),
    tonumber(redis.call('GET', floor) or '0') + 1)
  local n = 0
  local last = redis.call('XREVRANGE', stream, '+', '-', 'COUNT', 1)[1]
  if last then
    local lastUs, lastN = string.match(last[1], '^(%d+)-(%d+)$')
    if tonumber(lastUs) >= us then us, n = tonumber(lastUs), tonumber(lastN) + 1 end
  end
  redis.call('XADD', stream, 'MAXLEN', '~', ${KEPT_CHANGES}, string.format('%.0f-%.0f', us, n),
    's', hexId, 'k', kind, 'q', seq)
  redis.pcall('SPUBLISH', stream, '')
end
`;

// A session's entries in its shard's tag index (see tagIndexKey in schema.ts), one a tag:
// `<key>=<value>\0<updated>:<hexId>`, from its tags as its hash holds them (JSON text; false
// for none). A key has no `=` and a value no NUL, so no two tags share a member, and the
// members of one tag are a range that orders as the catalog does. The entries a script adds and
// those a later one removes are both built here from the same stored text, so they always agree.
const TAG_INDEX = `
local function tagEntries(tags, updated, hexId)
  local entries = {}
  if tags then
    for key, value in pairs(cjson.decode(tags)) do
      entries[#entries + 1] = key .. '=' .. value .. '\\0' .. updated .. ':' .. hexId
    end
  end
  return entries
end
local function untag(index, tags, updated, hexId)
  local entries = tagEntries(tags, updated, hexId)
  if #entries > 0 then redis.call('ZREM', index, unpack(entries)) end
end
local function tag(index, tags, updated, hexId)
  for _, entry in ipairs(tagEntries(tags, updated, hexId)) do redis.call('ZADD', index, 0, entry) end
end
-- Store \`given\` (JSON text; '{}' for none) as the tags of \`session\`; returns what it holds
-- now (false for none).
local function storeTags(session, given)
  if given == '{}' then
    redis.call('HDEL', session, 'tags')
    return false
  end
  redis.call('HSET', session, 'tags', given)
  return given
end
`;

// Remove a whole session: its entries in its shard's catalog, index of ids and tag index (it
// was last written at `updated`, its id is `hexId`), and its own keys, given after those, the
// session hash first.
const UNLINK_SESSION = `${TAG_INDEX}
local function unlinkSession(catalog, ids, tagIndex, updated, hexId, session, ...)
  untag(tagIndex, redis.call('HGET', session, 'tags'), updated, hexId)
  redis.call('ZREM', catalog, updated .. ':' .. hexId)
  redis.call('ZREM', ids, hexId)
  redis.call('UNLINK', session, ...)
end
`;

// The session of the scripts that take its every key (its own eight, then catalog, ids, its
// shard's change log and tag index: see wholeSession in schema.ts), removed whole.
const UNLINK_THIS_SESSION = `${UNLINK_SESSION}
local function unlinkThisSession(updated, hexId)
  unlinkSession(KEYS[9], KEYS[10], KEYS[13], updated, hexId, unpack(KEYS, 1, 8))
end
`;

// A sweep's decision about a session: its updatedAt and checkpoint count when it was last
// written before `before` (ms) and holds no pin, else nil.
const IDLE = `
local function idle(session, pins, before)
  local current = redis.call('HMGET', session, 'updated', 'count')
  if not current[1] or tonumber(current[1]) >= before then return nil end
  if redis.call('EXISTS', pins) == 1 then return nil end
  return current
end
`;

// Each script says whether it writes: a write cut off by a broken connection may or may not
// have run, a read has nothing to leave half-done.

// KEYS: session info data transcript seqs idempotency needs pins catalog ids changes floor
// tagIndex. ARGV: data metadata transcript expectFlag expectedHead idemFlag idemKey now hexId
// needs tags (needs: `<seq>,<seq>,…`, '' for none; tags: JSON text, '{}' for none, '' to leave
// them as they are)
export const append = new Script(
  'write',
  `${LOG_CHANGE}${TAG_INDEX}
local session, info, data, transcript, seqs, idem, needs, pins, catalog, ids =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10]
if ARGV[6] == '1' then
  local seq = redis.call('HGET', idem, ARGV[7])
  if seq then
    local record = redis.call('HGET', info, seq)
    if not record then return {'replayed', seq} end
    return {'replayed', seq, record, redis.call('HGET', data, seq), redis.call('HGET', pins, seq) or ''}
  end
end
local current = redis.call('HMGET', session, 'head', 'last', 'count', 'updated', 'tags')
local head = current[1]
if ARGV[4] == '1' and (head or '') ~= ARGV[5] then return {'conflict', head} end
local seq = (tonumber(current[2]) or 0) + 1
local record = (head or '') .. ' ' .. ARGV[8] .. ' ' .. ARGV[2]
if head then
  redis.call('ZREM', catalog, current[4] .. ':' .. ARGV[9])
  untag(KEYS[13], current[5], current[4], ARGV[9])
  redis.call('HSET', session, 'head', seq, 'last', seq, 'count', tonumber(current[3]) + 1,
    'updated', ARGV[8], 'hseq', seq, 'hinfo', record, 'hdata', ARGV[1], 'hpin', seq .. ' ')
else
  redis.call('HSET', session, 'head', seq, 'last', seq, 'count', 1, 'created', ARGV[8],
    'updated', ARGV[8], 'hseq', seq, 'hinfo', record, 'hdata', ARGV[1], 'hpin', seq .. ' ')
  redis.call('ZADD', ids, 0, ARGV[9])
  -- Pins a version that knew none left behind when it deleted a session of this id.
  redis.call('DEL', pins)
end
redis.call('ZADD', catalog, 0, ARGV[8] .. ':' .. ARGV[9])
local tags = current[5]
if ARGV[11] ~= '' then tags = storeTags(session, ARGV[11]) end
tag(KEYS[13], tags, ARGV[8], ARGV[9])
redis.call('HSET', info, seq, record)
redis.call('HSET', data, seq, ARGV[1])
if ARGV[3] ~= '[]' then redis.call('HSET', transcript, seq, ARGV[3]) end
if ARGV[10] ~= '' then
  -- Only the stored ones among those named (this checkpoint's own seq is not stored yet).
  local stored = {}
  for n in string.gmatch(ARGV[10], '[^,]+') do
    if redis.call('ZSCORE', seqs, n) then stored[#stored + 1] = n end
  end
  if #stored > 0 then redis.call('HSET', needs, seq, table.concat(stored, ',')) end
end
redis.call('ZADD', seqs, seq, seq)
if ARGV[6] == '1' then redis.call('HSET', idem, ARGV[7], seq) end
logChange(KEYS[11], KEYS[12], ARGV[9], 'checkpoint', seq)
return {'written', seq, head}
`,
);

// KEYS: session info data pins. ARGV: seq ('' for the head: when the session hash holds no
// copy of it). Returns seq info data pin.
export const load = new Script(
  'read',
  `
local seq = ARGV[1]
if seq == '' then
  seq = redis.call('HGET', KEYS[1], 'head')
  if not seq then return false end
end
local info = redis.call('HGET', KEYS[2], seq)
if not info then return false end
return {seq, info, redis.call('HGET', KEYS[3], seq), redis.call('HGET', KEYS[4], seq) or ''}
`,
);

// KEYS: idempotency info data pins. ARGV: idempotencyKey. Returns seq info data pin, or false
// when the key names no stored checkpoint.
export const loadByKey = new Script(
  'read',
  `
local seq = redis.call('HGET', KEYS[1], ARGV[1])
if not seq then return false end
local info = redis.call('HGET', KEYS[2], seq)
if not info then return false end
return {seq, info, redis.call('HGET', KEYS[3], seq), redis.call('HGET', KEYS[4], seq) or ''}
`,
);

// KEYS: session, info of each session described (all of one shard, so of one slot). Returns
// head count fid fseq created updated tags headInfo for each; head is nil for a missing session.
export const describe = new Script(
  'read',
  `
local out = {}
for n = 1, #KEYS, 2 do
  local fields = redis.call('HMGET', KEYS[n], 'head', 'count', 'fid', 'fseq', 'created', 'updated',
    'tags')
  fields[8] = fields[1] and redis.call('HGET', KEYS[n + 1], fields[1])
  for i = 1, 8 do out[#out + 1] = fields[i] end
end
return out
`,
);

// KEYS: seqs info pins. ARGV: beforeSeq ('' for none) limit. Returns seq, info, pin of each,
// newest first.
export const listCheckpoints = new Script(
  'read',
  `
local below = ARGV[1] == '' and '+inf' or ('(' .. ARGV[1])
local found = redis.call('ZREVRANGEBYSCORE', KEYS[1], below, '-inf', 'LIMIT', 0, tonumber(ARGV[2]))
local out = {}
for _, seq in ipairs(found) do
  out[#out + 1] = seq
  out[#out + 1] = redis.call('HGET', KEYS[2], seq)
  out[#out + 1] = redis.call('HGET', KEYS[3], seq) or ''
end
return out
`,
);

// KEYS: session info transcript. ARGV: fromSeq ('' for the head) limit withTranscript.
// Returns seq, parent, createdAt (and transcript) for each step, newest first.
export const lineage = new Script(
  'read',
  `
local seq = ARGV[1]
if seq == '' then seq = redis.call('HGET', KEYS[1], 'head') end
local limit, withTranscript, out, steps = tonumber(ARGV[2]), ARGV[3] == '1', {}, 0
while seq and steps < limit do
  local info = redis.call('HGET', KEYS[2], seq)
  if not info then break end
  local first = string.find(info, ' ', 1, true)
  local second = string.find(info, ' ', first + 1, true)
  local parent = string.sub(info, 1, first - 1)
  out[#out + 1] = seq
  out[#out + 1] = parent
  out[#out + 1] = string.sub(info, first + 1, second - 1)
  if withTranscript then out[#out + 1] = redis.call('HGET', KEYS[3], seq) or '[]' end
  steps = steps + 1
  seq = parent ~= '' and parent or nil
end
return out
`,
);

// KEYS: session info data catalog pins changes floor tagIndex. ARGV: seq expectFlag
// expectedHead now hexId
export const rollback = new Script(
  'write',
  `${LOG_CHANGE}${TAG_INDEX}
local current = redis.call('HMGET', KEYS[1], 'head', 'updated', 'tags')
if not current[1] then return {'no_session'} end
if ARGV[2] == '1' and current[1] ~= ARGV[3] then return {'conflict', current[1]} end
local record = redis.call('HGET', KEYS[2], ARGV[1])
if not record then return {'no_seq'} end
redis.call('ZREM', KEYS[4], current[2] .. ':' .. ARGV[5])
redis.call('HSET', KEYS[1], 'head', ARGV[1], 'updated', ARGV[4], 'hseq', ARGV[1],
  'hinfo', record, 'hdata', redis.call('HGET', KEYS[3], ARGV[1]),
  'hpin', ARGV[1] .. ' ' .. (redis.call('HGET', KEYS[5], ARGV[1]) or ''))
redis.call('ZADD', KEYS[4], 0, ARGV[4] .. ':' .. ARGV[5])
untag(KEYS[8], current[3], current[2], ARGV[5])
tag(KEYS[8], current[3], ARGV[4], ARGV[5])
logChange(KEYS[6], KEYS[7], ARGV[5], 'rollback', ARGV[1])
return {'done'}
`,
);

// KEYS: session info data transcript needs. ARGV: atSeq ('' for the head).
// Returns 'found', atSeq, the session's tags ('{}' for none), then seq, info, data, transcript
// (or nil), needs (or '') for atSeq, each ancestor, and what those need, directly or through
// one another.
export const forkRead = new Script(
  'read',
  `
local current = redis.call('HMGET', KEYS[1], 'head', 'tags')
local head = current[1]
if not head then return {'no_session'} end
local seq = ARGV[1] == '' and head or ARGV[1]
if redis.call('HEXISTS', KEYS[2], seq) == 0 then return {'no_seq'} end
local out, copied = {'found', seq, current[2] or '{}'}, {}
local function copy(seq, info)
  out[#out + 1] = seq
  out[#out + 1] = info
  out[#out + 1] = redis.call('HGET', KEYS[3], seq)
  out[#out + 1] = redis.call('HGET', KEYS[4], seq)
  out[#out + 1] = redis.call('HGET', KEYS[5], seq) or ''
  copied[#copied + 1] = seq
  copied[seq] = true
end
while seq do
  local info = redis.call('HGET', KEYS[2], seq)
  if not info then break end
  copy(seq, info)
  local parent = string.sub(info, 1, string.find(info, ' ', 1, true) - 1)
  seq = parent ~= '' and parent or nil
end
if redis.call('EXISTS', KEYS[5]) == 1 then
  local n = 1
  while n <= #copied do
    local list = redis.call('HGET', KEYS[5], copied[n])
    for needed in string.gmatch(list or '', '[^,]+') do
      local info = not copied[needed] and redis.call('HGET', KEYS[2], needed)
      if info then copy(needed, info) end
    end
    n = n + 1
  end
end
return out
`,
);

// KEYS: session info data transcript seqs catalog needs ids pins changes floor tagIndex.
// ARGV: now hexId sourceId atSeq tags ('{}' for none), then seq info data transcript ('' for
// none) needs ('' for none) per checkpoint. The whole copy appears at once, or not at all: the
// publishing step on the new id's slot. It copies no pins, and the source's tags.
export const forkWrite = new Script(
  'write',
  `${LOG_CHANGE}${TAG_INDEX}
if redis.call('EXISTS', KEYS[1]) == 1 then return 'exists' end
redis.call('DEL', KEYS[9])
local copied = 0
for k = 6, #ARGV, 5 do
  local seq = ARGV[k]
  redis.call('HSET', KEYS[2], seq, ARGV[k + 1])
  redis.call('HSET', KEYS[3], seq, ARGV[k + 2])
  if ARGV[k + 3] ~= '' then redis.call('HSET', KEYS[4], seq, ARGV[k + 3]) end
  if ARGV[k + 4] ~= '' then redis.call('HSET', KEYS[7], seq, ARGV[k + 4]) end
  redis.call('ZADD', KEYS[5], seq, seq)
  copied = copied + 1
end
-- The head (atSeq) comes first in the copy.
redis.call('HSET', KEYS[1], 'head', ARGV[4], 'last', ARGV[4], 'count', copied,
  'created', ARGV[1], 'updated', ARGV[1], 'fid', ARGV[3], 'fseq', ARGV[4],
  'hseq', ARGV[4], 'hinfo', ARGV[7], 'hdata', ARGV[8], 'hpin', ARGV[4] .. ' ')
tag(KEYS[12], storeTags(KEYS[1], ARGV[5]), ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[6], 0, ARGV[1] .. ':' .. ARGV[2])
redis.call('ZADD', KEYS[8], 0, ARGV[2])
logChange(KEYS[10], KEYS[11], ARGV[2], 'fork', ARGV[4])
return 'done'
`,
);

// KEYS: session info data transcript seqs needs pins changes floor.
// ARGV: keepLast ('' for none) createdBefore (ms, '' for none) dryRun hexId.
// A checkpoint goes when it is not among the keepLast highest seqs and was created before
// createdBefore (each rule only when given), unless it is the head, pinned, or needed by a
// kept one, directly or through one another. Returns how many went (with dryRun: would go).
export const prune = new Script(
  'write',
  `${LOG_CHANGE}
local head = redis.call('HGET', KEYS[1], 'head')
if not head then return 0 end
local keepLast = ARGV[1] ~= '' and tonumber(ARGV[1]) or 0
local before = ARGV[2] ~= '' and tonumber(ARGV[2]) or nil
local withNeeds = redis.call('EXISTS', KEYS[6]) == 1
-- What stays whatever the rules say; the keepLast highest are read only for what they need.
local kept, unread = {[head] = true}, {head}
for _, seq in ipairs(redis.call('HKEYS', KEYS[7])) do
  kept[seq] = true
  unread[#unread + 1] = seq
end
if withNeeds and keepLast > 0 then
  for _, seq in ipairs(redis.call('ZREVRANGE', KEYS[5], 0, keepLast - 1)) do
    kept[seq] = true
    unread[#unread + 1] = seq
  end
end
local candidates = {}
for _, seq in ipairs(redis.call('ZREVRANGE', KEYS[5], keepLast, -1)) do
  if not kept[seq] then
    local young = false
    if before then
      local info = redis.call('HGET', KEYS[2], seq)
      local first = string.find(info, ' ', 1, true)
      local second = string.find(info, ' ', first + 1, true)
      young = tonumber(string.sub(info, first + 1, second - 1)) >= before
    end
    if young then
      kept[seq] = true
      unread[#unread + 1] = seq
    else
      candidates[#candidates + 1] = seq
    end
  end
end
if withNeeds then
  while #unread > 0 do
    local list = redis.call('HGET', KEYS[6], table.remove(unread))
    for needed in string.gmatch(list or '', '[^,]+') do
      if not kept[needed] then
        kept[needed] = true
        unread[#unread + 1] = needed
      end
    end
  end
end
local removed = 0
for _, seq in ipairs(candidates) do
  if not kept[seq] then
    if ARGV[3] ~= '1' then
      redis.call('HDEL', KEYS[2], seq)
      redis.call('HDEL', KEYS[3], seq)
      redis.call('HDEL', KEYS[4], seq)
      redis.call('ZREM', KEYS[5], seq)
      if withNeeds then redis.call('HDEL', KEYS[6], seq) end
    end
    removed = removed + 1
  end
end
if removed > 0 and ARGV[3] ~= '1' then
  redis.call('HINCRBY', KEYS[1], 'count', -removed)
  logChange(KEYS[8], KEYS[9], ARGV[4], 'prune', head)
end
return removed
`,
);

// KEYS: session info data transcript seqs idempotency needs pins catalog ids changes floor
// tagIndex. ARGV: hexId
export const deleteSession = new Script(
  'write',
  `${UNLINK_THIS_SESSION}${LOG_CHANGE}
local updated = redis.call('HGET', KEYS[1], 'updated')
if not updated then return 0 end
unlinkThisSession(updated, ARGV[1])
logChange(KEYS[11], KEYS[12], ARGV[1], 'delete', '')
return 1
`,
);

// KEYS: session info pins. ARGV: seq pin (see script-values.ts). Returns 'done', 'no_session'
// or 'no_seq'.
export const pin = new Script(
  'write',
  `
if redis.call('EXISTS', KEYS[1]) == 0 then return 'no_session' end
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 0 then return 'no_seq' end
redis.call('HSET', KEYS[3], ARGV[1], ARGV[2])
if redis.call('HGET', KEYS[1], 'hseq') == ARGV[1] then
  redis.call('HSET', KEYS[1], 'hpin', ARGV[1] .. ' ' .. ARGV[2])
end
return 'done'
`,
);

// KEYS: session pins. ARGV: seq. Returns 1 when it was pinned.
export const unpin = new Script(
  'write',
  `
if redis.call('HDEL', KEYS[2], ARGV[1]) == 0 then return 0 end
if redis.call('HGET', KEYS[1], 'hseq') == ARGV[1] then
  redis.call('HSET', KEYS[1], 'hpin', ARGV[1] .. ' ')
end
return 1
`,
);

// KEYS: session info data transcript seqs idempotency needs pins catalog ids changes floor
// tagIndex. ARGV: hexId idleBefore (ms) dryRun. Deletes the session only if it was last written before
// idleBefore and holds no pin; returns how many checkpoints it held, or -1 when it stays.
export const deleteIdle = new Script(
  'write',
  `${UNLINK_THIS_SESSION}${IDLE}${LOG_CHANGE}
local current = idle(KEYS[1], KEYS[8], tonumber(ARGV[2]))
if not current then return -1 end
if ARGV[3] ~= '1' then
  unlinkThisSession(current[1], ARGV[1])
  logChange(KEYS[11], KEYS[12], ARGV[1], 'delete', '')
end
return tonumber(current[2])
`,
);

// KEYS: catalog ids changes floor tagIndex of one shard, then session info data transcript
// seqs idempotency needs pins of each session to decide about (all of that shard). ARGV:
// idleBefore (ms), then the hex id of each. Deletes, each decided as deleteIdle decides, those last written before
// idleBefore that hold no pin. Returns how many sessions went, and how many checkpoints.
export const deleteIdleBatch = new Script(
  'write',
  `${UNLINK_SESSION}${IDLE}${LOG_CHANGE}
local before, sessions, checkpoints = tonumber(ARGV[1]), 0, 0
for n = 2, #ARGV do
  local at = 5 + 8 * (n - 2)
  local current = idle(KEYS[at + 1], KEYS[at + 8], before)
  if current then
    unlinkSession(KEYS[1], KEYS[2], KEYS[5], current[1], ARGV[n], unpack(KEYS, at + 1, at + 8))
    logChange(KEYS[3], KEYS[4], ARGV[n], 'delete', '')
    sessions, checkpoints = sessions + 1, checkpoints + tonumber(current[2])
  end
end
return {sessions, checkpoints}
`,
);

// KEYS: session tagIndex. ARGV: tags (JSON text, '{}' for none) hexId. Replaces the session's
// tags, in its hash and in the tag index, whose entries keep its updatedAt: nothing else
// changes, and no change is logged (a watcher follows checkpoints, not tags). Returns 1, or 0
// (writing nothing) when the session does not exist.
export const setTags = new Script(
  'write',
  `${TAG_INDEX}
local current = redis.call('HMGET', KEYS[1], 'updated', 'tags')
if not current[1] then return 0 end
untag(KEYS[2], current[2], current[1], ARGV[2])
tag(KEYS[2], storeTags(KEYS[1], ARGV[1]), current[1], ARGV[2])
return 1
`,
);

// KEYS: the tag index of one shard. ARGV: from (the tail of a member, `<updated>:<hexId>`,
// exclusive; '' for the newest) count budget hexPrefix ('' for every id), then where each tag
// asked for starts in the index, `<key>=<value>\0`. Walks the members of the tag that has the
// fewest in this shard, newest first, and keeps the tail of each whose id starts with
// hexPrefix and whose session has every other tag too (an entry of its own at the same tail),
// until it keeps `count` or has read `budget` members: one call holds the server for a bounded
// time, however rare the matches. Returns where it stopped (the tail of the last member read,
// to go on from; '' once it has read the last), then the tails kept.
export const taggedPage = new Script(
  'read',
  `
local index, from, count, budget, hexPrefix = KEYS[1], ARGV[1], tonumber(ARGV[2]),
  tonumber(ARGV[3]), ARGV[4]
local starts = {}
for n = 5, #ARGV do starts[#starts + 1] = ARGV[n] end
-- Past a tag's last member: its start with the NUL raised by one.
local function past(start) return string.sub(start, 1, -2) .. '\\1' end
local walked = 1
if #starts > 1 then
  local fewest
  for n, start in ipairs(starts) do
    local members = redis.call('ZLEXCOUNT', index, '[' .. start, '(' .. past(start))
    if members == 0 then return {''} end
    if not fewest or members < fewest then walked, fewest = n, members end
  end
end
local start = starts[walked]
local filtering = #starts > 1 or hexPrefix ~= ''
local function matches(tail)
  -- A tail is 15 digits, ':', then the hex id.
  if string.sub(tail, 17, 16 + #hexPrefix) ~= hexPrefix then return false end
  for n, other in ipairs(starts) do
    if n ~= walked and not redis.call('ZSCORE', index, other .. tail) then return false end
  end
  return true
end
local max = from == '' and ('(' .. past(start)) or ('(' .. start .. from)
-- With a filter, each read asks for twice as many as the one before: a filter most entries
-- pass reads little past the page, one few pass reads in few commands.
local out, read, batch = {''}, 0, count
while true do
  local asked = count - (#out - 1)
  if filtering then
    asked = math.min(budget - read, math.max(asked, batch))
    batch = batch * 2
  end
  if asked <= 0 then return out end
  local batch = redis.call('ZREVRANGEBYLEX', index, max, '[' .. start, 'LIMIT', 0, asked)
  for _, member in ipairs(batch) do
    local tail = string.sub(member, #start + 1)
    read, out[1] = read + 1, tail
    if not filtering or matches(tail) then
      out[#out + 1] = tail
      if #out - 1 == count then return out end
    end
  end
  if #batch < asked then
    out[1] = ''
    return out
  end
  max = '(' .. batch[#batch]
end
`,
);

// KEYS: ids built catalog, of one shard. ARGV: min max, the ZRANGEBYLEX bounds of a prefix.
// Returns the hex ids in the range. Sessions written before the index existed are in the
// catalog only: the first listing of a shard indexes them, once.
export const prefixIds = new Script(
  'write',
  `
if redis.call('EXISTS', KEYS[2]) == 0 then
  for _, member in ipairs(redis.call('ZRANGE', KEYS[3], 0, -1)) do
    redis.call('ZADD', KEYS[1], 0, string.sub(member, string.find(member, ':', 1, true) + 1))
  end
  redis.call('SET', KEYS[2], '1')
end
return redis.call('ZRANGEBYLEX', KEYS[1], ARGV[1], ARGV[2])
`,
);

// KEYS: session hashes, all of one shard. Returns each one's updatedAt, nil for one that is gone.
export const updatedOf = new Script(
  'read',
  `
local out = {}
for n, key in ipairs(KEYS) do out[n] = redis.call('HGET', key, 'updated') end
return out
`,
);

// An indexed hash (state scopes, the KV store): values in a hash, their keys in a sorted set
// (all scores 0, so it orders them by bytes) for prefix listings. KEYS: values index, and for a
// state scope its shard's catalog of scopes, which lists it (ARGV's last: its member) while
// it holds a key, and its shard's change log (changes floor), where each change is recorded.

// ARGV: key value [member]
export const indexedSet = new Script(
  'write',
  `${LOG_CHANGE}
if redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) == 1 then redis.call('ZADD', KEYS[2], 0, ARGV[1]) end
if KEYS[3] then
  redis.call('ZADD', KEYS[3], 0, ARGV[3])
  logChange(KEYS[4], KEYS[5], ARGV[3], 'state', '')
end
return 1
`,
);

// ARGV: key [member]. Returns 1 when it was there.
export const indexedDelete = new Script(
  'write',
  `${LOG_CHANGE}
if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('ZREM', KEYS[2], ARGV[1])
if KEYS[3] then
  if redis.call('ZCARD', KEYS[2]) == 0 then redis.call('ZREM', KEYS[3], ARGV[2]) end
  logChange(KEYS[4], KEYS[5], ARGV[2], 'state', '')
end
return 1
`,
);

// ARGV: key expectFlag ('0': must be absent) expected expectedText value [member]. The value
// expected may be held as its bytes or, written at layout version 1, as its text. Returns 1
// when written.
export const indexedCompareAndSet = new Script(
  'write',
  `${LOG_CHANGE}
local current = redis.call('HGET', KEYS[1], ARGV[1])
if ARGV[2] == '0' then
  if current then return 0 end
elseif current ~= ARGV[3] and current ~= ARGV[4] then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[5])
if not current then redis.call('ZADD', KEYS[2], 0, ARGV[1]) end
if KEYS[3] then
  redis.call('ZADD', KEYS[3], 0, ARGV[6])
  logChange(KEYS[4], KEYS[5], ARGV[6], 'state', '')
end
return 1
`,
);

// KEYS: seqs info data transcript needs pins. ARGV: afterSeq ('' for none) limit.
// Returns seq, info, data, transcript ('[]' for none), needs ('' for none), pin of each, seq
// ascending.
export const exportCheckpoints = new Script(
  'read',
  `
local above = ARGV[1] == '' and '-inf' or ('(' .. ARGV[1])
local found = redis.call('ZRANGEBYSCORE', KEYS[1], above, '+inf', 'LIMIT', 0, tonumber(ARGV[2]))
local out = {}
for _, seq in ipairs(found) do
  out[#out + 1] = seq
  out[#out + 1] = redis.call('HGET', KEYS[2], seq)
  out[#out + 1] = redis.call('HGET', KEYS[3], seq)
  out[#out + 1] = redis.call('HGET', KEYS[4], seq) or '[]'
  out[#out + 1] = redis.call('HGET', KEYS[5], seq) or ''
  out[#out + 1] = redis.call('HGET', KEYS[6], seq) or ''
end
return out
`,
);

// KEYS: session data transcript. ARGV: seq fromData fromDataText fromTranscript
// fromTranscriptText toData toTranscript. Replaces a checkpoint's data and transcript items (and
// the session hash's copy of its data) only while they are still the values compared ('[]' for
// no items), each held as bytes or, written at layout version 1, as its text. Returns 1 when
// rewritten.
export const rewrite = new Script(
  'write',
  `
local function holds(value, bytes, text) return value == bytes or value == text end
if not holds(redis.call('HGET', KEYS[2], ARGV[1]), ARGV[2], ARGV[3]) then return 0 end
if not holds(redis.call('HGET', KEYS[3], ARGV[1]) or '[]', ARGV[4], ARGV[5]) then return 0 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[6])
if ARGV[7] ~= '[]' then redis.call('HSET', KEYS[3], ARGV[1], ARGV[7]) end
if redis.call('HGET', KEYS[1], 'hseq') == ARGV[1] then redis.call('HSET', KEYS[1], 'hdata', ARGV[6]) end
return 1
`,
);

// KEYS: session info data transcript seqs idempotency needs pins catalog ids changes floor
// tagIndex. ARGV: replaceFlag hexId head fid ('' for none) fseq created updated tags ('{}' for
// none), then seq info data transcript needs ('' for none) pin ('' for none) per checkpoint,
// seq ascending. The whole session appears at once, or not at all.
export const importSession = new Script(
  'write',
  `${UNLINK_THIS_SESSION}${LOG_CHANGE}
local old = redis.call('HGET', KEYS[1], 'updated')
if old then
  if ARGV[1] ~= '1' then return 'exists' end
  unlinkThisSession(old, ARGV[2])
else
  redis.call('DEL', KEYS[8])
end
local count, last, hinfo, hdata, hpin = 0, nil, nil, nil, nil
for k = 9, #ARGV, 6 do
  local seq = ARGV[k]
  redis.call('HSET', KEYS[2], seq, ARGV[k + 1])
  redis.call('HSET', KEYS[3], seq, ARGV[k + 2])
  if ARGV[k + 3] ~= '[]' then redis.call('HSET', KEYS[4], seq, ARGV[k + 3]) end
  if ARGV[k + 4] ~= '' then redis.call('HSET', KEYS[7], seq, ARGV[k + 4]) end
  if ARGV[k + 5] ~= '' then redis.call('HSET', KEYS[8], seq, ARGV[k + 5]) end
  redis.call('ZADD', KEYS[5], seq, seq)
  if seq == ARGV[3] then hinfo, hdata, hpin = ARGV[k + 1], ARGV[k + 2], ARGV[k + 5] end
  count, last = count + 1, seq
end
redis.call('HSET', KEYS[1], 'head', ARGV[3], 'last', last, 'count', count,
  'created', ARGV[6], 'updated', ARGV[7], 'hseq', ARGV[3], 'hinfo', hinfo, 'hdata', hdata,
  'hpin', ARGV[3] .. ' ' .. hpin)
if ARGV[4] ~= '' then redis.call('HSET', KEYS[1], 'fid', ARGV[4], 'fseq', ARGV[5]) end
tag(KEYS[13], storeTags(KEYS[1], ARGV[8]), ARGV[7], ARGV[2])
redis.call('ZADD', KEYS[9], 0, ARGV[7] .. ':' .. ARGV[2])
redis.call('ZADD', KEYS[10], 0, ARGV[2])
logChange(KEYS[11], KEYS[12], ARGV[2], 'checkpoint', ARGV[3])
return 'imported'
`,
);

// KEYS: the namespace's marker (see schema.ts). ARGV: the layout version this package writes,
// then the ones before it. Marks a namespace without a marker, or of a version before, as of
// this version; returns the version it is marked with after, which is another only when it is
// one this package does not know.
export const markLayout = new Script(
  'write',
  `
local current = redis.call('GET', KEYS[1])
if current == ARGV[1] then return current end
if current then
  local known = false
  for n = 2, #ARGV do known = known or current == ARGV[n] end
  if not known then return current end
end
redis.call('SET', KEYS[1], ARGV[1])
return ARGV[1]
`,
);

// A shard's change log, as change-log.ts reads it in two rounds.

// KEYS: changes floor. Returns how far the shard's log reaches, in microseconds: the higher of
// its floor and its last entry's time ('0' for a shard that never logged a change). Reads only.
export const changesReach = new Script(
  'read',
  `
local reach = tonumber(redis.call('GET', KEYS[2]) or '0')
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)[1]
if last then reach = math.max(reach, tonumber(string.match(last[1], '^%d+'))) end
return string.format('%.0f', reach)
`,
);

// KEYS: changes floor. ARGV: horizon (microseconds) from (an entry id, inclusive) count.
// Raises the floor to the horizon, so that no entry is added at or below it from now on, and
// returns the id the stream keeps entries from when it let go of some ('0-0' when it let go of
// none: every entry it was given is there; the trim lets go of the oldest only, so every
// entry below that id may be gone, and none at or above it is), then id, hex id, kind, seq
// of each entry from `from` up to the horizon, at most count. It writes (the floor) but
// changes no data: a reader that lost its connection just reads again.
export const changesRead = new Script(
  'read',
  `
if tonumber(ARGV[1]) > tonumber(redis.call('GET', KEYS[2]) or '0') then
  redis.call('SET', KEYS[2], ARGV[1])
end
if redis.call('EXISTS', KEYS[1]) == 0 then return {'0-0'} end
local info, stream = redis.call('XINFO', 'STREAM', KEYS[1]), {}
for n = 1, #info, 2 do stream[info[n]] = info[n + 1] end
if not stream['entries-added'] then
  return redis.error_reply('watch() needs Redis 7.0 or later, whose streams count what they let go')
end
local out = {stream['entries-added'] > stream['length'] and stream['recorded-first-entry-id'] or '0-0'}
if tonumber(ARGV[3]) > 0 then
  for _, entry in ipairs(redis.call('XRANGE', KEYS[1], ARGV[2], ARGV[1], 'COUNT', ARGV[3])) do
    local fields = {}
    for n = 1, #entry[2], 2 do fields[entry[2][n]] = entry[2][n + 1] end
    out[#out + 1] = entry[1]
    out[#out + 1] = fields.s
    out[#out + 1] = fields.k
    out[#out + 1] = fields.q
  end
end
return out
`,
);
