import { dirname } from "node:path";
import { editCheckOf, guardAnswer, hasWildcard, ownSessions } from "../domain/reservations.js";
import { LIMITS } from "../schemas/limits.js";
import { type Location, locate } from "../service/locate.js";
import { resolveLikeKernel } from "../service/resolve-path.js";
import { withReservationLookup } from "../store/sqlite/reservation-lookup.js";
import { readStoreRecord } from "../store/store-record.js";
import { isEditTool, preToolUseInput, preToolUseOutput } from "./edit-guard.js";
import { type HookOutcome, type HookSettings, hookSession } from "./hook-common.js";
import { type HookPayload, parsePayload, projectDirOf } from "./hook-payload.js";
import { noteSubagentCall } from "./subagent-calls.js";

/**
 * Claude Code runs `arbeit hook pre-tool-use` before every file tool and every Arbeit MCP call,
 * so this hook answers in as little code as its answer needs. Before an Arbeit MCP call it opens
 * no database and only leaves a sub-agent's note. Before a file tool on a project with a local
 * SQLite store it reads the store file directly (read-only: the reservation lookup the store
 * makes, and the project's warn-only switch only when an edit would be refused) and applies the
 * rules of src/domain/reservations.ts, loading neither the store nor the service. Whatever it
 * does not answer this way (a checkout that uses a service or Postgres, a path with wildcard
 * characters in its name, a store file it cannot read as is) is left to the full hook
 * (src/claude/hooks.ts), which gives the same answer through the service; so is an edit it
 * would refuse, since a refusal is recorded (edit_refused) and this path writes nothing.
 */

const SILENT: HookOutcome = { stdout: "", stderr: "" };

/** Before an Arbeit MCP call: a sub-agent's call is noted for the MCP server to tell apart. */
export function noteArbeitCall(payload: HookPayload, location: Location | undefined): HookOutcome {
  if (location && payload.agent_id && payload.tool_use_id)
    noteSubagentCall(dirname(location.dbPath), payload.tool_use_id, payload.agent_id);
  return SILENT;
}

/** A project-relative path the lookup takes as it is: the service would resolve it to itself. */
const literal = (path: string) => !hasWildcard(path) && !path.includes("\\");
/**
 * A path the lookup takes as it is, or everything below one (`src/**`, what deleting or moving a
 * folder changes): the service resolves such a pattern by its literal folder, as a path.
 */
const plain = (path: string) =>
  path.length <= LIMITS.file_path &&
  (path === "**" || literal(path) || (path.endsWith("/**") && literal(path.slice(0, -3))));

/**
 * The hook's answer, or undefined when the full hook must give it. `input` is the hook's stdin.
 */
export async function quickPreToolUse(
  input: string,
  settings: HookSettings,
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
): Promise<HookOutcome | undefined> {
  try {
    const payload = parsePayload(input);
    const dir = projectDirOf(payload, env, cwd);
    const location = locate({ cwd: dir, db: settings.db });
    if (!isEditTool(payload.tool_name)) return noteArbeitCall(payload, location);
    // A service (ARBEIT_URL, or one recorded in the checkout) or Postgres: the full hook's.
    if (!settings.db && (env.ARBEIT_URL || env.ARBEIT_DATABASE_URL)) return undefined;
    if (!location) return SILENT;
    if (!settings.db && readStoreRecord(dirname(location.dbPath)) !== undefined) return undefined;
    const root = resolveLikeKernel(location.root) ?? location.root;
    const paths = preToolUseInput(payload, dir, root)?.paths;
    const { session, parents } = hookSession(payload);
    // Nothing in the project, or no session to hold anything against: every edit is allowed.
    if (!paths || !session) return SILENT;
    if (!paths.every(plain)) return undefined;
    const answer = await withReservationLookup(location.dbPath, async (lookup) => {
      const check = editCheckOf(paths, await lookup.reservationsNear(paths), ownSessions(session, parents));
      return guardAnswer(check, check.decision === "deny" ? await lookup.enforcement() : undefined);
    });
    // A refusal is recorded (edit_refused), which this read-only path cannot: the full hook gives
    // the same answer and records it. Refusals are rare; allowed edits stay on this path.
    if (answer.decision === "deny") return undefined;
    return { stdout: preToolUseOutput(answer).stdout, stderr: "" };
  } catch {
    // The full hook tries again, and says what went wrong.
    return undefined;
  }
}
