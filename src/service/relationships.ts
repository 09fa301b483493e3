import { ArbeitError, taskNotFound } from "../domain/errors.js";
import { circular } from "../domain/hierarchy.js";
import { normalizeEdge } from "../domain/relationships.js";
import type { Relationship, RelationshipType } from "../domain/types.js";
import type { RelationshipInput } from "../schemas/inputs.js";
import type { Caller } from "./caller.js";
import { assertNotHeldByOther } from "./claims.js";
import { assertCanBlock, assertCanParent } from "./invariants.js";
import { mutate, ok, type Result, type ServiceDeps, type WriteContext } from "./operation.js";

export type { RelationshipInput };

/** The task whose own fields (parent_id, blocked_by) an edge changes, so its version moves. */
function affectedTask(edge: { from: string; to: string; type: RelationshipType }): string | null {
  return edge.type === "parent_of" || edge.type === "blocks" ? edge.to : null;
}

/**
 * An edge that changes a task's parent or blockers reshapes it, which is its holder's to do while
 * another session holds it live (as arbeit_task_update refuses): ALREADY_CLAIMED. A person who
 * must do it anyway sets parent_id or blocked_by with arbeit_task_update and force.
 */
async function assertTouchedNotHeld(w: WriteContext, touched: string | null): Promise<void> {
  const task = touched === null ? undefined : await w.tx.lockTask(touched);
  if (task) assertNotHeldByOther(w, task);
}

export async function changeRelationship(
  deps: ServiceDeps,
  input: RelationshipInput,
  caller: Caller,
): Promise<Result<{ relationship: Relationship } | { removed: boolean }>> {
  const edge = normalizeEdge(input.from_task_id, input.to_task_id, input.type);
  if (input.action === "remove" && input.metadata !== undefined) {
    throw new ArbeitError("INVALID_ARGUMENT", 'metadata is only accepted with action "add".');
  }
  return mutate(deps, caller, async (w) => {
    const { tx, now } = w;
    await tx.lockGraph();
    const touched = affectedTask(edge);
    if (input.action === "remove") {
      // Removal works even when an end was deleted: that is how orphans get cleaned up. An end
      // that never existed is a mistake in the call, not an edge that is already gone.
      for (const id of [edge.from, edge.to]) if (!(await tx.taskExists(id)).exists) throw taskNotFound(id);
      const existing = await tx.findRelationship(edge.from, edge.to, edge.type);
      if (existing === undefined) return ok({ removed: false });
      await assertTouchedNotHeld(w, touched);
      await tx.removeRelationship(existing.id, now);
      if (touched && (await tx.getTask(touched))) await tx.touchTask(touched, now);
      await w.emit({
        event_type: "relationship_removed",
        entity_type: "relationship",
        entity_id: existing.id,
        task_id: touched ?? edge.from,
        payload: { from_task_id: edge.from, to_task_id: edge.to, type: edge.type },
      });
      return ok({ removed: true });
    }

    for (const id of [edge.from, edge.to]) if ((await tx.getTask(id)) === undefined) throw taskNotFound(id);
    if (edge.from === edge.to) {
      if (edge.type === "parent_of" || edge.type === "blocks") throw circular(edge.type, edge.from, edge.to);
      throw new ArbeitError("INVALID_ARGUMENT", `A task cannot be related to itself (${edge.type}).`);
    }
    if (await tx.findRelationship(edge.from, edge.to, edge.type)) {
      throw new ArbeitError("RELATIONSHIP_EXISTS", `${edge.from} ${edge.type} ${edge.to} already exists.`, {
        details: { from_task_id: edge.from, to_task_id: edge.to, type: edge.type },
      });
    }
    if (edge.type === "parent_of") {
      const child = (await tx.getTask(edge.to))!;
      if (child.parent_id !== null) {
        throw new ArbeitError(
          "RELATIONSHIP_EXISTS",
          `${child.id} already has parent ${child.parent_id}; a task has one parent.`,
          {
            details: { task_id: child.id, parent_id: child.parent_id },
            suggestions: [`Re-parent with arbeit_task_update {task_id: "${child.id}", parent_id: "${edge.from}"}.`],
          },
        );
      }
      await assertCanParent(tx, edge.from, edge.to);
    }
    if (edge.type === "blocks") await assertCanBlock(tx, edge.from, edge.to);
    // Checked once the edge proved valid, so an edge that would fail anyway fails for its own reason.
    await assertTouchedNotHeld(w, touched);
    const id = await tx.insertRelationship({
      from_task_id: edge.from,
      to_task_id: edge.to,
      type: edge.type,
      metadata: input.metadata ?? null,
      created_at: now,
    });
    if (touched) await tx.touchTask(touched, now);
    const relationship: Relationship = {
      id,
      from_task_id: edge.from,
      to_task_id: edge.to,
      type: edge.type,
      metadata: input.metadata ?? null,
      created_at: now,
    };
    await w.emit({
      event_type: "relationship_added",
      entity_type: "relationship",
      entity_id: id,
      task_id: touched ?? edge.from,
      payload: { from_task_id: edge.from, to_task_id: edge.to, type: edge.type, metadata: relationship.metadata },
    });
    return ok({ relationship });
  });
}
