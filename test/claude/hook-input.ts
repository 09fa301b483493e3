import { join } from "node:path";
import { type CliResult, runCli } from "../helpers/cli.js";

/** A hook's stdin as Claude Code writes it: the fields every event has, then the event's own. */
export function hookPayload(dir: string, session: string, event: string, fields: Record<string, unknown>): string {
  return JSON.stringify({
    session_id: session,
    transcript_path: join(dir, ".claude-transcript.jsonl"),
    cwd: dir,
    hook_event_name: event,
    ...fields,
  });
}

/** `arbeit hook <name>` through the built CLI, in the environment Claude Code gives hooks: the outer test env must not leak in. */
export function runHook(
  name: string,
  input: string,
  cwd: string,
  env: Record<string, string> = {},
): Promise<CliResult> {
  return runCli(["hook", name], { cwd, input, env: { CLAUDE_PROJECT_DIR: "", ...env } });
}
