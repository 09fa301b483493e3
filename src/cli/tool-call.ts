import type { Envelope } from "../domain/envelope.js";
import { serviceTarget } from "../remote/target.js";
import type { ToolDef } from "../tools/define.js";
import { failure, invokeTool } from "../tools/envelope.js";
import { callerNames, type GlobalOptions } from "./global-options.js";
import { cliToolContext } from "./tool-context.js";

/**
 * Runs one tool for a CLI command: on the project's store, or, in a checkout that points at an
 * `arbeit serve` service (`arbeit init --server`, ARBEIT_URL), as one request to the service,
 * which checks the arguments itself, so no schema is built here (docs/team.md).
 */
export async function callTool(tool: ToolDef, args: unknown, options: GlobalOptions): Promise<Envelope> {
  let remote: ReturnType<typeof serviceTarget>;
  try {
    remote = serviceTarget({ cwd: process.cwd(), db: options.db ?? process.env.ARBEIT_DB });
  } catch (error) {
    return failure(error);
  }
  if (remote) {
    const { remoteCall } = await import("../remote/call.js");
    return remoteCall(remote, tool.name, args, callerNames(options));
  }
  const ctx = cliToolContext(options);
  try {
    return await invokeTool(tool, args, ctx);
  } finally {
    await ctx.close();
  }
}
