import type { Caller } from "./caller.js";
import { addContext } from "./context.js";
import { ok, type Result, type ServiceDeps } from "./operation.js";
import { workingFor } from "./work.js";

/**
 * A tool call that failed while a session works on a task is a dead end worth keeping: it is
 * recorded as an `attempt` entry on the task. A loop of failures must not bury the task's real
 * context, so a failure is skipped when the same tool failed on the task within the last minute,
 * or when the same failure is already recorded there.
 */

export const FAILURE_WINDOW_MS = 60_000;
const ERROR_CHARS = 600;
const INPUT_CHARS = 200;
/** Marks the entries this records, so later failures can be compared with them. */
const SOURCE = "tool_failure";

export interface ToolFailureInput {
  tool: string;
  /** What the tool was asked to do, in a line (a Bash command, a file path). */
  input?: string | undefined;
  error: string;
}

export type ToolFailureResult =
  | { recorded: true; task_id: string; entry_id: string }
  | { recorded: false; reason: "no_active_work" | "rate_limited" | "duplicate" };

const clip = (text: string, max: number) => {
  const flat = text.trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
};

export async function recordToolFailure(
  deps: ServiceDeps,
  input: ToolFailureInput,
  caller: Caller & { session: string },
): Promise<Result<ToolFailureResult>> {
  const content = [
    `${input.tool} failed${input.input ? `: ${clip(input.input, INPUT_CHARS)}` : ""}`,
    `Outcome: ${clip(input.error, ERROR_CHARS)}`,
  ].join("\n");
  const verdict = await deps.store.read(async (tx) => {
    // Inside a hook's write transaction the session's turn comes first: of parallel tool calls
    // failing at once, each reads the failures recorded before it (a read alone takes no turn).
    tx.lockSession(caller.session);
    const active = await workingFor(tx, caller.session, caller.parents);
    if (!active) return { reason: "no_active_work" } as const;
    const earlier = (await tx.contextOf(active.task_id, true)).filter(
      (entry) => entry.type === "attempt" && entry.metadata?.source === SOURCE,
    );
    if (earlier.some((entry) => entry.content === content)) return { reason: "duplicate" } as const;
    const recent = deps.nowDate().getTime() - FAILURE_WINDOW_MS;
    if (earlier.some((entry) => entry.metadata?.tool === input.tool && Date.parse(entry.created_at) > recent))
      return { reason: "rate_limited" } as const;
    return { task_id: active.task_id, reason: undefined };
  });
  if (verdict.reason !== undefined) return ok({ recorded: false, reason: verdict.reason });
  const { data } = await addContext(
    deps,
    { task_id: verdict.task_id, type: "attempt", content, metadata: { source: SOURCE, tool: input.tool } },
    caller,
  );
  return ok({ recorded: true, task_id: verdict.task_id, entry_id: data.entry.id });
}
