import { ArbeitError } from "./errors.js";
import type { MemoryScope } from "./types.js";

/**
 * An agent's own memory is the first thing its briefing shows it, so only that agent writes it:
 * every action that changes entries (set, delete, merge) in the agent scope of another agent is
 * refused, whoever asks, a person included. Reading it is open to all. gc is left out: it removes
 * only entries that had already expired, which no read returns.
 */
export const MEMORY_WRITES = ["set", "delete", "merge"] as const;

const writes = (action: unknown): boolean => (MEMORY_WRITES as readonly unknown[]).includes(action);

/**
 * Why `agent` may not make this memory call, or undefined when it may. `scopeId` is the agent
 * scope's id as given (absent: the caller's own). A caller that names no agent (a program using
 * the library without one) keeps no agent memory of its own and is held to nothing here.
 */
export function otherAgentsMemoryRefusal(
  agent: string | null | undefined,
  call: { action?: unknown; scope?: unknown; scope_id?: unknown },
): ArbeitError | undefined {
  if (!agent || !writes(call.action) || (call.scope as MemoryScope | undefined) !== "agent") return undefined;
  if (typeof call.scope_id !== "string" || call.scope_id === agent) return undefined;
  return new ArbeitError(
    "FORBIDDEN",
    `Agent ${JSON.stringify(call.scope_id)}'s memory is its own: ${agent} may read it but not ${String(call.action)} it. Nothing was written.`,
    {
      details: { tool: "arbeit_memory", action: call.action, scope: "agent", scope_id: call.scope_id },
      suggestions: [
        "Keep your own lessons in your own agent memory (scope agent, no scope_id), or share them in project or list memory.",
      ],
    },
  );
}
