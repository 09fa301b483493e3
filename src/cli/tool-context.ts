import type { ArbeitService } from "../service/arbeit-service.js";
import { openProject } from "../service/project.js";
import type { ToolContext } from "../tools/define.js";
import type { GlobalOptions } from "./global-options.js";

/** The CLI's caller: flags first, then ARBEIT_* variables, then the shared "cli" session. */
export function cliToolContext(
  options: GlobalOptions,
  env: NodeJS.ProcessEnv = process.env,
): ToolContext & { close(): Promise<void> } {
  let service: Promise<ArbeitService> | undefined;
  const db = options.db ?? env.ARBEIT_DB;
  const cwd = process.cwd();
  return {
    caller: {
      session: options.session ?? env.ARBEIT_SESSION ?? "cli",
      agent: options.agent ?? env.ARBEIT_AGENT ?? "cli",
      ...((options.list ?? env.ARBEIT_LIST) ? { list_id: options.list ?? env.ARBEIT_LIST } : {}),
    },
    cwd,
    db,
    service: () => {
      service ??= openProject({ cwd, db });
      return service;
    },
    close: async () => {
      if (service) await (await service.catch(() => undefined))?.close();
    },
  };
}
