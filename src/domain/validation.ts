import { withArticle } from "./article.js";
import { ArbeitError, type ErrorCode } from "./errors.js";
import type { TaskStatus, TaskType } from "./types.js";

/** The text fields a task type needs. */
export type RequiredField = "intent" | "description" | "plan";

export const REQUIRED_FIELDS: Record<TaskType, readonly RequiredField[]> = {
  epic: ["intent", "description"],
  feature: ["intent", "description", "plan"],
  bug: ["intent", "description", "plan"],
  investigation: ["description", "plan"],
  chore: ["description", "plan"],
};

const FIELD_ERROR: Record<RequiredField, ErrorCode> = {
  intent: "INTENT_REQUIRED",
  description: "DESCRIPTION_REQUIRED",
  plan: "PLAN_REQUIRED",
};

export type TaskText = Partial<Record<RequiredField, string | null>>;

function isBlank(value: string | null | undefined): boolean {
  return value === undefined || value === null || value.trim() === "";
}

/** Fields the type asks for that are still empty: reported as a recommendation, never an error. */
export function missingFields(type: TaskType | null, task: TaskText): RequiredField[] {
  if (type === null) return [];
  return REQUIRED_FIELDS[type].filter((field) => isBlank(task[field]));
}

/**
 * Fields a move into `next` needs: in_progress needs the type's required fields;
 * completed also needs description (all typed tasks) and plan (all but epic).
 */
export function fieldsRequiredFor(type: TaskType | null, next: TaskStatus): RequiredField[] {
  if (type === null) return [];
  if (next === "in_progress") return [...REQUIRED_FIELDS[type]];
  if (next === "completed") {
    const needed = new Set<RequiredField>(REQUIRED_FIELDS[type]);
    needed.add("description");
    if (type !== "epic") needed.add("plan");
    return (["intent", "description", "plan"] as const).filter((field) => needed.has(field));
  }
  return [];
}

const capitalized = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/**
 * Throws the error code of the first missing field of a status transition. `on` is the call that
 * asked for it: a failed create is fixed on the create call itself, a task that exists by an update.
 */
export function assertTransition(
  type: TaskType | null,
  next: TaskStatus,
  task: TaskText,
  on: "create" | "existing" = "existing",
): void {
  const missing = fieldsRequiredFor(type, next).filter((field) => isBlank(task[field]));
  const first = missing[0];
  if (first === undefined) return;
  throw new ArbeitError(
    FIELD_ERROR[first],
    `${capitalized(withArticle(String(type)))} task needs ${missing.join(", ")} before it can move to ${next}.`,
    {
      details: { missing_fields: missing, status: next },
      suggestions:
        on === "create"
          ? [
              `Pass ${missing.join(", ")} in the same arbeit_task_create call, or create the task open and fill them in before moving it to ${next}.`,
            ]
          : [
              `Fill them with arbeit_task_update {task_id, ${missing.join(", ")}} (you can set them and the status in one call).`,
            ],
    },
  );
}

export function assertTitle(title: string | undefined): void {
  if (title === undefined || title.trim() === "") {
    throw new ArbeitError("TITLE_REQUIRED", "Every task needs a non-empty title.");
  }
}
