import { ArbeitError } from "../domain/errors.js";
import { switchLogged } from "../domain/guard-switches.js";
import { otherAgentsMemoryRefusal } from "../domain/memory-owner.js";
import { DEFAULT_LIST_ID, type MemoryEntry, type MemoryScope } from "../domain/types.js";
import type { MemoryInput } from "../schemas/inputs.js";
import { jsonBytes } from "../schemas/json-size.js";
import { LIMITS } from "../schemas/limits.js";
import type { Caller } from "./caller.js";
import { assertNotFenced } from "./claims.js";
import { requireTask } from "./invariants.js";
import { type SimilarPair, similarPairs } from "./memory-terms.js";
import { mutate, ok, type Result, type ServiceDeps, type WriteContext } from "./operation.js";

export type { MemoryInput };

/**
 * Scoped key/value memory: project-wide, per list, per task or per agent; upsert by key; an
 * optional TTL after which the entry is never returned and is swept away. What is set again is
 * reinforced, and a scope keeps at most LIMITS.memory_entries: a new key beyond that evicts the
 * entry that matters least, so an agent's write never fails for want of room.
 */
function resolveScopeId(scope: MemoryScope, given: string | undefined, caller: Caller): string {
  switch (scope) {
    case "project":
      if (given) throw new ArbeitError("INVALID_ARGUMENT", "The project scope takes no scope_id.");
      return "";
    case "list":
      return given ?? caller.list_id ?? DEFAULT_LIST_ID;
    case "agent": {
      const agent = given ?? caller.agent;
      if (!agent) throw new ArbeitError("INVALID_ARGUMENT", "The agent scope needs scope_id or a caller agent.");
      return agent;
    }
    case "task":
      if (!given) throw new ArbeitError("INVALID_ARGUMENT", "The task scope needs scope_id: the task's id.");
      return given;
  }
}

function requireKey(input: MemoryInput): string {
  if (!input.key) throw new ArbeitError("INVALID_ARGUMENT", `key is required for action "${input.action}".`);
  return input.key;
}

type MemoryResult =
  | { entry: MemoryEntry | null }
  | { entry: MemoryEntry; evicted?: MemoryEntry[] }
  | { entries: MemoryEntry[] }
  | { deleted: boolean }
  | { collected: number }
  | { pairs: SimilarPair[] }
  | { entry: MemoryEntry; merged: string[] };

/**
 * Deletes expired entries for good: everywhere, or in one scope. They were already invisible, so
 * no event records it (as with the sweep before every memory write).
 */
export async function collectMemory(
  deps: ServiceDeps,
  caller: Caller,
  only?: { scope: MemoryScope; scope_id: string },
): Promise<Result<{ collected: number }>> {
  return mutate(deps, caller, async (w) => ok({ collected: await w.tx.memorySweep(w.now, only) }));
}

export async function memory(deps: ServiceDeps, input: MemoryInput, caller: Caller): Promise<Result<MemoryResult>> {
  if (input.action === "gc") {
    if (input.scope === undefined && input.scope_id !== undefined)
      throw new ArbeitError("INVALID_ARGUMENT", "scope_id needs a scope.");
    const only = input.scope && { scope: input.scope, scope_id: resolveScopeId(input.scope, input.scope_id, caller) };
    return collectMemory(deps, caller, only);
  }
  const scope = input.scope ?? "project";
  const scopeId = resolveScopeId(scope, input.scope_id, caller);
  const refusal = otherAgentsMemoryRefusal(caller.agent, { action: input.action, scope, scope_id: scopeId });
  if (refusal) throw refusal;
  if (input.action === "merge") return merge(deps, input, caller, scope, scopeId);
  if (input.action === "get" || input.action === "list" || input.action === "similar") {
    return deps.store.read(async (tx) => {
      const now = deps.now();
      if (input.action === "similar") {
        // Every live entry of the scope (at most LIMITS.memory_entries), compared pair by pair.
        const all = await tx.memoryList({
          scopes: [{ scope, scope_id: scopeId }],
          now,
          limit: LIMITS.memory_entries * 2,
        });
        return ok({ pairs: similarPairs(all, input.key).slice(0, input.limit ?? 20) });
      }
      if (input.action === "get")
        return ok({ entry: (await tx.memoryGet(scope, scopeId, requireKey(input), now)) ?? null });
      const entries = await tx.memoryList({
        scopes: [{ scope, scope_id: scopeId }],
        prefix: input.prefix,
        now,
        limit: input.limit ?? 100,
      });
      return ok({ entries });
    });
  }
  const key = requireKey(input);
  if (input.action === "set" && input.value === undefined)
    throw new ArbeitError("INVALID_ARGUMENT", 'value is required for action "set".');
  if (input.action === "set" && jsonBytes(input.value) > LIMITS.memory_value_bytes) {
    throw new ArbeitError("FIELD_TOO_LARGE", `value is larger than ${LIMITS.memory_value_bytes} bytes of JSON.`, {
      details: { field: "value", limit: LIMITS.memory_value_bytes },
    });
  }
  return mutate(deps, caller, async (w) => {
    const { tx, now } = w;
    if (scope === "task") await assertNotFenced(w, await requireTask(tx, scopeId));
    await tx.memorySweep(now);
    const taskId = scope === "task" ? scopeId : null;
    if (input.action === "delete") {
      const deletedId = await tx.memoryDelete(scope, scopeId, key);
      if (deletedId) {
        await w.emit({
          event_type: "memory_deleted",
          entity_type: "memory",
          entity_id: deletedId,
          task_id: taskId,
          payload: { scope, scope_id: scopeId, key, ...switchLogged(scope, key, undefined) },
        });
      }
      return ok({ deleted: deletedId !== undefined });
    }
    const expires_at =
      input.ttl_seconds === undefined
        ? null
        : new Date(deps.nowDate().getTime() + input.ttl_seconds * 1000).toISOString();
    const evicted = (await tx.memoryGet(scope, scopeId, key, now)) ? [] : await makeRoom(w, scope, scopeId, taskId);
    const entry = await tx.memoryUpsert({ scope, scope_id: scopeId, key, value: input.value, expires_at, at: now });
    await w.emit({
      event_type: "memory_set",
      entity_type: "memory",
      entity_id: entry.id,
      task_id: taskId,
      payload: {
        scope,
        scope_id: scopeId,
        key,
        value: entry.value,
        expires_at,
        reinforced: entry.reinforced,
        ...switchLogged(scope, key, entry.value),
      },
    });
    if (evicted.length === 0) return ok({ entry });
    const keys = evicted.map((e) => JSON.stringify(e.key)).join(", ");
    return ok({ entry, evicted }, [
      {
        code: "MEMORY_EVICTED",
        message: `This scope holds at most ${LIMITS.memory_entries} entries: ${keys} (least reinforced, least recently set) was evicted to make room. Its value is in evicted; set it again if it still matters.`,
      },
    ]);
  });
}

/**
 * Frees one place for a new key in a full scope by evicting the entries that matter least: the
 * least reinforced, then the least recently set. Evicting rather than refusing keeps the agent's
 * newest note, which is the one it just decided matters. Writers adding keys to one scope at
 * once count it in turn (the store's memoryCount), so none adds one past the cap.
 */
async function makeRoom(w: WriteContext, scope: MemoryScope, scopeId: string, taskId: string | null) {
  const over = (await w.tx.memoryCount(scope, scopeId, w.now)) - LIMITS.memory_entries + 1;
  if (over <= 0) return [];
  const evicted = await w.tx.memoryWeakest(scope, scopeId, w.now, over);
  for (const entry of evicted) {
    await w.tx.memoryDelete(scope, scopeId, entry.key);
    await w.emit({
      event_type: "memory_deleted",
      entity_type: "memory",
      entity_id: entry.id,
      task_id: taskId,
      payload: { scope, scope_id: scopeId, key: entry.key, reason: "evicted" },
    });
  }
  return evicted;
}

/**
 * Folds entries of one scope that say the same thing into one, in one transaction: `keys` are
 * the entries (every one live, else MEMORY_NOT_FOUND naming the missing and nothing changes);
 * `key` is the one kept (default the first of `keys`; a key not among them is a new entry that
 * takes their place). The kept entry holds `value` when given, else its own value (a new key's
 * is the first entry's); it counts every reinforcement of the merged entries, was first set when
 * the earliest of them was, and expires when the last of them would (never, if one never does).
 * The others are deleted.
 */
async function merge(
  deps: ServiceDeps,
  input: MemoryInput,
  caller: Caller,
  scope: MemoryScope,
  scopeId: string,
): Promise<Result<MemoryResult>> {
  const keys = [...new Set(input.keys ?? [])];
  if (keys.length < 2)
    throw new ArbeitError("INVALID_ARGUMENT", "merge needs keys: at least two different keys of the scope.");
  if (input.ttl_seconds !== undefined) throw new ArbeitError("INVALID_ARGUMENT", "merge takes no ttl_seconds.");
  if (input.value !== undefined && jsonBytes(input.value) > LIMITS.memory_value_bytes) {
    throw new ArbeitError("FIELD_TOO_LARGE", `value is larger than ${LIMITS.memory_value_bytes} bytes of JSON.`, {
      details: { field: "value", limit: LIMITS.memory_value_bytes },
    });
  }
  const kept = input.key ?? keys[0]!;
  const mergedKeys = keys.filter((key) => key !== kept);
  return mutate(deps, caller, async (w) => {
    const { tx, now } = w;
    if (scope === "task") await assertNotFenced(w, await requireTask(tx, scopeId));
    const taskId = scope === "task" ? scopeId : null;
    const found = await Promise.all(keys.map((key) => tx.memoryGet(scope, scopeId, key, now)));
    const missing = keys.filter((_, i) => found[i] === undefined);
    if (missing.length > 0) {
      throw new ArbeitError(
        "MEMORY_NOT_FOUND",
        `No live ${scope} memory entry ${missing.map((key) => JSON.stringify(key)).join(", ")}: nothing was merged.`,
        { details: { keys: missing } },
      );
    }
    const entries = found as MemoryEntry[];
    // A kept key outside `keys` that is already set is folded in like the others.
    const existing = keys.includes(kept) ? undefined : await tx.memoryGet(scope, scopeId, kept, now);
    if (existing) entries.unshift(existing);
    const target = entries.find((entry) => entry.key === kept);
    const expiries = entries.map((entry) => entry.expires_at);
    const merged = {
      value: input.value ?? (target ?? entries[0]!).value,
      expires_at: expiries.includes(null) ? null : (expiries as string[]).sort().at(-1)!,
      reinforced: entries.reduce((sum, entry) => sum + entry.reinforced, 0),
      created_at: entries.map((entry) => entry.created_at).sort()[0]!,
    };
    for (const entry of entries) {
      if (entry.key === kept) continue;
      await tx.memoryDelete(scope, scopeId, entry.key);
      await w.emit({
        event_type: "memory_deleted",
        entity_type: "memory",
        entity_id: entry.id,
        task_id: taskId,
        payload: {
          scope,
          scope_id: scopeId,
          key: entry.key,
          reason: "merged",
          into: kept,
          ...switchLogged(scope, entry.key, undefined),
        },
      });
    }
    if (!target)
      await tx.memoryUpsert({ scope, scope_id: scopeId, key: kept, value: merged.value, expires_at: null, at: now });
    const entry = (await tx.memoryReplace({ scope, scope_id: scopeId, key: kept, at: now, ...merged }))!;
    await w.emit({
      event_type: "memory_set",
      entity_type: "memory",
      entity_id: entry.id,
      task_id: taskId,
      payload: {
        scope,
        scope_id: scopeId,
        key: kept,
        value: entry.value,
        expires_at: entry.expires_at,
        reinforced: entry.reinforced,
        merged: mergedKeys,
        ...switchLogged(scope, kept, entry.value),
      },
    });
    return ok({ entry, merged: mergedKeys });
  });
}
