import type { ArbeitService } from "../service/arbeit-service.js";
import { openProject } from "../service/project.js";
import type { ToolContext } from "../tools/define.js";
import { callerNames, type GlobalOptions } from "./global-options.js";

/**
 * The CLI's caller: flags first, then ARBEIT_* variables. Without a session the CLI acts as the
 * session `agent:<name>`, one per agent name, so separate invocations share claims and focus.
 */
export function cliToolContext(
  options: GlobalOptions,
  env: NodeJS.ProcessEnv = process.env,
): ToolContext & { close(): Promise<void> } {
  let service: Promise<ArbeitService> | undefined;
  const db = options.db ?? env.ARBEIT_DB;
  const cwd = process.cwd();
  const { session, agent, list } = callerNames(options, env);
  return {
    caller: {
      session: session ?? null,
      agent: agent ?? "cli",
      ...(list ? { list_id: list } : {}),
    },
    cwd,
    db,
    service: () => {
      service ??= openProject({ cwd, db, shortLived: true });
      return service;
    },
    close: async () => {
      if (service) await (await service.catch(() => undefined))?.close();
    },
  };
}
