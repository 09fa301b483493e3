import { ENFORCE_KEY, type GuardAnswer, guardAnswer } from "../domain/reservations.js";
import type { ArbeitService } from "../service/arbeit-service.js";
import type { Caller } from "../service/caller.js";
import { list, relativePath, row } from "./step-input.js";
import type { Access, HostStep } from "./steps.js";

/**
 * Hosts ask before a file tool writes (Claude Code's PreToolUse hook, the OpenCode plugin's
 * `tool.execute.before`): may this session edit these files now? An edit of a file another live
 * session reserved exclusively is refused, unless a person switched the project to warn-only
 * by setting the project memory key ENFORCE_KEY to "warn"; then it is let through with the
 * reason as a warning (domain/reservations.ts, guardAnswer).
 */

export { ENFORCE_KEY, type GuardAnswer } from "../domain/reservations.js";

/** More paths than one tool call writes. */
const MAX_PATHS = 1_000;

/** The project's warn-only switch (ENFORCE_KEY's value), undefined when unset. */
export async function enforcement(service: ArbeitService, caller: Caller): Promise<unknown> {
  const { entry } = (await service.memory({ action: "get", key: ENFORCE_KEY }, caller)).data as {
    entry: { value: unknown } | null;
  };
  return entry?.value;
}

/**
 * The check, with the project's warn-only switch applied; a caller without a session may edit
 * anything. An edit refused is recorded (edit_refused, once per session, reservation and path)
 * unless the caller may only read.
 */
export async function guardEdit(
  service: ArbeitService,
  paths: string[],
  caller: Caller,
  access: Access = "read-write",
): Promise<GuardAnswer> {
  if (paths.length === 0 || !caller.session) return { decision: "allow" };
  const check = (await service.checkEdit({ paths }, caller)).data;
  // The switch is read only when an edit would be refused: an edit nobody else holds costs the one lookup.
  const answer = guardAnswer(check, check.decision === "deny" ? await enforcement(service, caller) : undefined);
  if (answer.decision === "deny" && access === "read-write") await service.recordEditRefused(check, caller);
  return answer;
}

/** The check as a host step: locally in the hook's process, or as one POST /api/hook to `arbeit serve`. */
export const checkEditStep: HostStep<{ paths: string[] }, GuardAnswer> = {
  name: "check-edit",
  read(input) {
    return { paths: list(row(input), "paths", MAX_PATHS, (entry, field) => relativePath({ [field]: entry }, field)) };
  },
  readOnly: "reads",
  run: (service, input, caller, access) => guardEdit(service, input.paths, caller, access),
  outcome: (answer) => (answer.decision === "deny" ? "edit_refused" : undefined),
};
