import { ArbeitError } from "../domain/errors.js";
import { DEFAULT_LIST_ID, type MemoryEntry, type MemoryScope } from "../domain/types.js";
import type { MemoryInput } from "../schemas/inputs.js";
import { jsonBytes } from "../schemas/json-size.js";
import { LIMITS } from "../schemas/limits.js";
import type { Caller } from "./caller.js";
import { requireTask } from "./invariants.js";
import { mutate, ok, type Result, type ServiceDeps } from "./operation.js";

export type { MemoryInput };

/**
 * Scoped key/value memory: project-wide, per list, per task or per agent; upsert by
 * key; an optional TTL after which the entry is never returned and is swept away.
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

type MemoryResult = { entry: MemoryEntry | null } | { entries: MemoryEntry[] } | { deleted: boolean };

export async function memory(deps: ServiceDeps, input: MemoryInput, caller: Caller): Promise<Result<MemoryResult>> {
  const scope = input.scope ?? "project";
  const scopeId = resolveScopeId(scope, input.scope_id, caller);
  if (input.action === "get" || input.action === "list") {
    return deps.store.read(async (tx) => {
      const now = deps.now();
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
    if (scope === "task") await requireTask(tx, scopeId);
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
          payload: { scope, scope_id: scopeId, key },
        });
      }
      return ok({ deleted: deletedId !== undefined });
    }
    const expires_at =
      input.ttl_seconds === undefined
        ? null
        : new Date(deps.nowDate().getTime() + input.ttl_seconds * 1000).toISOString();
    const entry = await tx.memoryUpsert({ scope, scope_id: scopeId, key, value: input.value, expires_at, at: now });
    await w.emit({
      event_type: "memory_set",
      entity_type: "memory",
      entity_id: entry.id,
      task_id: taskId,
      payload: { scope, scope_id: scopeId, key, value: entry.value, expires_at },
    });
    return ok({ entry });
  });
}
