import type { Caller } from "./caller.js";
import { addContext } from "./context.js";
import { ok, type Result, type ServiceDeps } from "./operation.js";
import { stopWork, workingFor } from "./work.js";

/**
 * A session that ends while it works on a task leaves a handoff for whoever picks the task up
 * next: a `note` context entry saying what got done, what remains, the latest decisions and the
 * files it touched. A session that ends more than once (a conversation resumed run after run)
 * keeps one live handoff: each supersedes its previous one. With `stop`, its work then stops,
 * which hands its claim back.
 */

const ITEMS = 8;
const ITEM_CHARS = 200;
const clip = (text: string) => {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= ITEM_CHARS ? flat : `${flat.slice(0, ITEM_CHARS - 1)}…`;
};
/** The first (or last) few of a list, with how many more there are. */
function listed(label: string, items: string[], from: "first" | "last" = "first"): string[] {
  if (items.length === 0) return [];
  const shown = from === "first" ? items.slice(0, ITEMS) : items.slice(-ITEMS);
  const more = items.length - shown.length;
  return [`${label}:`, ...shown.map((item) => `- ${clip(item)}`), ...(more > 0 ? [`- (${more} more)`] : [])];
}

export type HandoffResult =
  | { task_id: null }
  | { task_id: string; note_id: string; stopped: boolean; claim_released: boolean };

export async function endSession(
  deps: ServiceDeps,
  input: { reason: string; stop: boolean },
  caller: Caller & { session: string },
): Promise<Result<HandoffResult>> {
  const session = caller.session;
  const draft = await deps.store.read(async (tx) => {
    const active = await workingFor(tx, session);
    if (!active) return undefined;
    const since = active.started_at;
    const progress = await tx.progressOf(active.task_id);
    const live = await tx.contextOf(active.task_id, false);
    const decisions = live.filter((entry) => entry.type === "decision");
    const previous = live.find((entry) => entry.metadata?.handoff === true && entry.metadata.session === session);
    const files = (await tx.filesOf(active.task_id)).filter(
      (file) => file.session_id === session && file.created_at >= since,
    );
    const written = new Set(files.filter((file) => file.operation === "write").map((file) => file.file_path));
    const touched = [...new Set(files.map((file) => file.file_path))].sort();
    const lines = [
      `Handoff: session ${session} ended (${input.reason}) after working on this task since ${since}.`,
      ...listed(
        "Done in this session",
        progress.filter((item) => item.completed && (item.completed_at ?? "") >= since).map((item) => item.content),
      ),
      ...listed(
        "Remaining",
        progress.filter((item) => !item.completed).map((item) => item.content),
      ),
      ...listed(
        "Latest decisions",
        decisions.map((entry) => entry.content),
        "last",
      ),
      ...listed(
        "Files touched",
        touched.map((path) => `${path} (${written.has(path) ? "written" : "read"})`),
      ),
    ];
    if (progress.length === 0 && decisions.length === 0 && touched.length === 0)
      lines.push("Nothing was recorded on the task in this session.");
    return { task_id: active.task_id, content: lines.join("\n"), previous: previous?.id };
  });
  if (!draft) return ok({ task_id: null });
  const { data } = await addContext(
    deps,
    {
      task_id: draft.task_id,
      type: "note",
      content: draft.content,
      metadata: { handoff: true, session, reason: input.reason },
      ...(draft.previous ? { supersede_entry_id: draft.previous } : {}),
    },
    caller,
  );
  const stopped = input.stop ? (await stopWork(deps, { task_id: draft.task_id }, caller)).data : undefined;
  return ok({
    task_id: draft.task_id,
    note_id: data.entry.id,
    stopped: stopped?.stopped ?? false,
    claim_released: stopped?.claim_released ?? false,
  });
}
