import type { ArbeitService } from "../service/arbeit-service.js";
import type { Caller } from "../service/caller.js";
import { type EditCheck, holderOf } from "../service/reservations.js";
import { list, relativePath, row } from "./step-input.js";
import type { HostStep } from "./steps.js";

/**
 * Hosts ask before a file tool writes (Claude Code's PreToolUse hook, the OpenCode plugin's
 * `tool.execute.before`): may this session edit these files now? An edit of a file another live
 * session reserved exclusively is refused, unless a person switched the project to warn-only
 * by setting the project memory key ENFORCE_KEY to "warn"; then it is let through with the
 * reason as a warning.
 */

/** The project memory key that switches enforcement: "warn" lets denied edits through, warned. */
export const ENFORCE_KEY = "reservations.enforce";

export interface GuardAnswer {
  decision: EditCheck["decision"];
  /** For the model: who holds the file, for which task, until when, and what to do instead. */
  reason?: string;
}

/** More paths than one tool call writes. */
const MAX_PATHS = 1_000;

/** The check, with the project's warn-only switch applied; a caller without a session may edit anything. */
export async function guardEdit(service: ArbeitService, paths: string[], caller: Caller): Promise<GuardAnswer> {
  if (paths.length === 0 || !caller.session) return { decision: "allow" };
  const check = (await service.checkEdit({ paths }, caller)).data;
  if (check.decision === "allow") return { decision: "allow" };
  if (check.decision === "deny") {
    // Read only when an edit would be refused: an edit nobody else holds costs the one lookup.
    const { entry } = (await service.memory({ action: "get", key: ENFORCE_KEY }, caller)).data as {
      entry: { value: unknown } | null;
    };
    const held = check.conflicts.find((c) => c.mode === "exclusive");
    if (entry?.value === "warn" && held)
      return {
        decision: "warn",
        reason: `${held.path} is reserved exclusively by ${holderOf(held)} until ${held.until} (${held.pattern}). This project enforces reservations as warnings only, so the edit goes ahead: re-read the file first and keep the change small, since that session may be editing it too.`,
      };
  }
  return { decision: check.decision, ...(check.reason ? { reason: check.reason } : {}) };
}

/** The check as a host step: locally in the hook's process, or as one POST /api/hook to `arbeit serve`. */
export const checkEditStep: HostStep<{ paths: string[] }, GuardAnswer> = {
  name: "check-edit",
  read(input) {
    return { paths: list(row(input), "paths", MAX_PATHS, (entry, field) => relativePath({ [field]: entry }, field)) };
  },
  readOnly: "reads",
  run: (service, input, caller) => guardEdit(service, input.paths, caller),
};
