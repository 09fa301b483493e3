import { ArbeitError } from "../domain/errors.js";
import type { ContextEntry } from "../domain/types.js";
import type { AddContextInput } from "../schemas/inputs.js";
import type { Caller } from "./caller.js";
import { assertNotFenced } from "./claims.js";
import { requireTask } from "./invariants.js";
import { mutate, ok, type Result, type ServiceDeps } from "./operation.js";

export type { AddContextInput };

/** Entries are immutable: a stale one is replaced by superseding it. */
export async function addContext(
  deps: ServiceDeps,
  input: AddContextInput,
  caller: Caller,
): Promise<Result<{ entry: ContextEntry; superseded?: ContextEntry }>> {
  if (input.content.trim() === "") {
    throw new ArbeitError("INVALID_ARGUMENT", "content must not be empty.");
  }
  return mutate(deps, caller, async (w) => {
    const { tx, now } = w;
    const task = await requireTask(tx, input.task_id);
    w.read(task);
    await assertNotFenced(w, task);
    let old: ContextEntry | undefined;
    if (input.supersede_entry_id !== undefined) {
      old = await tx.lockContext(input.supersede_entry_id);
      if (old === undefined || old.task_id !== task.id) {
        throw new ArbeitError(
          "ENTRY_NOT_FOUND",
          `Context entry ${input.supersede_entry_id} does not exist on ${task.id}.`,
          {
            details: { entry_id: input.supersede_entry_id, task_id: task.id },
          },
        );
      }
      if (old.superseded_by !== null) {
        throw new ArbeitError(
          "ALREADY_SUPERSEDED",
          `Context entry ${old.id} was already superseded by ${old.superseded_by}.`,
          {
            details: { entry_id: old.id, superseded_by: old.superseded_by },
            suggestions: [`Supersede ${old.superseded_by} instead, the newest entry in the chain.`],
          },
        );
      }
      // A person's word (user_input) is replaced only by a person's word: superseding it with a
      // note would move the answer out of every briefing, in the agent's words instead.
      if (old.type === "user_input" && input.type !== "user_input") {
        throw new ArbeitError(
          "FORBIDDEN",
          `Context entry ${old.id} is a person's word (user_input): only another user_input may supersede it. Nothing was written.`,
          {
            details: { entry_id: old.id, type: input.type },
            suggestions: ["Add your entry without supersede_entry_id; the person's word stays as it is."],
          },
        );
      }
    }
    const metadata = input.metadata ?? old?.metadata ?? null;
    const id = await tx.insertContext({
      task_id: task.id,
      type: input.type,
      content: input.content,
      metadata,
      created_at: now,
    });
    // The entry as written (metadata as its JSON column reads back): nothing waits to read it.
    const entry: ContextEntry = {
      id,
      task_id: task.id,
      type: input.type,
      content: input.content,
      metadata: metadata === null ? null : (JSON.parse(JSON.stringify(metadata)) as Record<string, unknown>),
      superseded_by: null,
      created_at: now,
    };
    await w.emit({
      event_type: "context_added",
      entity_type: "context_entry",
      entity_id: id,
      task_id: task.id,
      payload: { type: entry.type, content: entry.content, metadata: entry.metadata, supersedes: old?.id ?? null },
    });
    if (old === undefined) return ok({ entry });
    await tx.markSuperseded(old.id, id);
    await w.emit({
      event_type: "context_superseded",
      entity_type: "context_entry",
      entity_id: old.id,
      task_id: task.id,
      payload: { superseded_by: id },
    });
    return ok({ entry, superseded: (await tx.getContext(old.id))! });
  });
}
