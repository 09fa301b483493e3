import type { EventType } from "../domain/types.js";
import type { Caller } from "./caller.js";
import { mutate, ok, type Result, type ServiceDeps } from "./operation.js";
import { workingFor } from "./work.js";

/** The events a host records about a session itself rather than about a task it changed. */
export type SessionEventType = Extract<
  EventType,
  "prompt_submitted" | "subagent_started" | "subagent_stopped" | "session_compacted" | "client_cut_off"
>;

/**
 * Records what a host saw the session do (a prompt, a sub-agent, a compaction) as an event of the
 * session, on the task it works for (its own, else its parent's) so the task's history shows it,
 * else on no task. Being activity on that task, it renews the lease the working session holds.
 * Nothing waits for the event's answer: it travels with the transaction's COMMIT, so a hook whose
 * other part reads (the news) commits in the round trip after its reads.
 */
export async function recordSessionEvent(
  deps: ServiceDeps,
  input: { event_type: SessionEventType; payload: Record<string, unknown> },
  caller: Caller,
): Promise<Result<{ task_id: string | null }>> {
  return mutate(deps, caller, async (w) => {
    const active = await workingFor(w.tx, w.session, caller.parents);
    if (active) w.touched(active.task_id, active.session_id);
    const task_id = active?.task_id ?? null;
    await w.emit({
      event_type: input.event_type,
      entity_type: "session",
      entity_id: w.session,
      task_id,
      payload: input.payload,
    });
    return ok({ task_id });
  });
}
