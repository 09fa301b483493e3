import type { Envelope } from "../domain/envelope.js";
import { serviceTarget } from "../remote/target.js";
import { requestId } from "../schemas/common.js";
import { LIMITS } from "../schemas/limits.js";
import { takesRequestId } from "../tools/catalogue.js";
import type { ToolDef } from "../tools/define.js";
import { failure, invokeTool } from "../tools/envelope.js";
import { callerNames, envSetting, type GlobalOptions } from "./global-options.js";
import { cliToolContext } from "./tool-context.js";
import { UsageError } from "./usage-error.js";

/**
 * ARBEIT_REQUEST_ID is the call's request_id when the tool takes one and the call names none
 * (--request-id, or request_id in the JSON, wins): the environment is how a hook or script that
 * retries passes its idempotency key. A read ignores it, so a key exported in a shell spoils no
 * query. A key the tool would refuse is a usage error naming the variable, before anything is sent.
 */
function withEnvRequestId(tool: ToolDef, args: unknown): unknown {
  const key = envSetting(process.env, "ARBEIT_REQUEST_ID");
  if (key === undefined || !takesRequestId(tool)) return args;
  if (args === null || typeof args !== "object" || Array.isArray(args) || Object.hasOwn(args, "request_id"))
    return args;
  const checked = requestId.safeParse(key);
  if (!checked.success) {
    const problem =
      key.length > LIMITS.name
        ? `must be at most ${LIMITS.name} characters (got ${key.length})`
        : checked.error.issues[0]!.message;
    throw new UsageError(`ARBEIT_REQUEST_ID ${problem}.`);
  }
  return { ...args, request_id: key };
}

/**
 * Runs one tool for a CLI command: on the project's store, or, in a checkout that points at an
 * `arbeit serve` service (`arbeit init --server`, ARBEIT_URL), as one request to the service,
 * which checks the arguments itself, so no schema is built here (docs/team.md).
 */
export async function callTool(tool: ToolDef, given: unknown, options: GlobalOptions): Promise<Envelope> {
  const args = withEnvRequestId(tool, given);
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
