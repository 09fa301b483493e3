import type { ToolContext as OpencodeToolContext } from "@opencode-ai/plugin";
import type { z } from "zod";
import { remoteCall } from "../remote/call.js";
import type { Caller } from "../service/caller.js";
import { TOOLS } from "../tools/catalogue.js";
import type { ToolContext, ToolDef } from "../tools/define.js";
import { invokeTool } from "../tools/envelope.js";
import type { ProjectHandle } from "./project-handle.js";
import { opencodeArgs } from "./tool-args.js";

/**
 * Built-in OpenCode tool names a plugin must never register: OpenCode keys tools by name with the
 * plugin's last, so a clash would silently replace the host's own tool (`task` runs
 * subagents, `todowrite` the session's todo list).
 */
export const HOST_TOOL_NAMES = new Set([
  "task",
  "todowrite",
  "todoread",
  "bash",
  "read",
  "write",
  "edit",
  "multiedit",
  "apply_patch",
  "glob",
  "grep",
  "list",
  "webfetch",
  "websearch",
  "codesearch",
  "skill",
  "question",
  "invalid",
]);

/** The shape OpenCode expects under `Hooks.tool` (ToolDefinition), with args as a zod v4 shape. */
export interface OpencodeTool {
  description: string;
  args: Record<string, z.core.$ZodType>;
  execute(args: unknown, context: OpencodeToolContext): Promise<{ title: string; output: string; metadata: object }>;
}

/**
 * Every catalogue tool under its own name, its args the catalogue's zod v4 shape (see
 * opencodeArgs). invokeTool validates with the strict schema, so the envelope and its errors are
 * the same as on every other front end. In a checkout that uses `arbeit serve`, each call is one
 * request to the service, which validates it the same way.
 */
export function opencodeTools(
  project: ProjectHandle,
  callerFor: (context: OpencodeToolContext) => Caller,
): Record<string, OpencodeTool> {
  const tools: Record<string, OpencodeTool> = {};
  for (const def of TOOLS as readonly ToolDef[]) {
    if (HOST_TOOL_NAMES.has(def.name)) continue;
    tools[def.name] = {
      description: def.description,
      args: opencodeArgs(def.input.shape),
      async execute(args, context) {
        const caller = callerFor(context);
        const remote = project.remote();
        const ctx: ToolContext = {
          caller,
          cwd: project.where.cwd,
          db: project.where.db,
          service: () => project.service(),
        };
        const envelope = remote
          ? await remoteCall(
              remote,
              def.name,
              args,
              {
                session: caller.session ?? undefined,
                parents: caller.parents,
                list: caller.list_id,
              },
              project.env,
            )
          : await invokeTool(def, args, ctx);
        return {
          title: envelope.success ? def.title : `${def.title}: ${envelope.error.code}`,
          output: JSON.stringify(envelope),
          metadata: envelope.success ? { success: true } : { success: false, code: envelope.error.code },
        };
      },
    };
  }
  return tools;
}
