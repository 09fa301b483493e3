import { fromDirectory } from "../domain/paths.js";
import { localRelative, localRunner, remoteRunner, trackCommandStep } from "../remote/steps.js";
import { serviceTarget } from "../remote/target.js";
import { locate } from "../service/project.js";
import { resolveLikeKernel } from "../service/resolve-path.js";
import { failure } from "../tools/envelope.js";
import type { GlobalOptions } from "./global-options.js";
import { printEnvelope, wantsJson, write } from "./output.js";
import { parseFlags } from "./schema-flags.js";
import { cliToolContext } from "./tool-context.js";
import { UsageError } from "./usage-error.js";

const USAGE = `Usage: arbeit track <path> [--op read|write]

Records that the session read or wrote <path> (relative to the current directory), against the
task the session is working on (arbeit task start-work). Nothing is recorded without active work
or for a path outside the project; data.tracked says whether it was. Default --op: write.
In a checkout that uses an Arbeit service, the path is sent relative to the project root.
`;

export async function run(argv: string[], options: GlobalOptions): Promise<number> {
  if (options.help) {
    write(1, USAGE);
    return 0;
  }
  const args = parseFlags(
    argv,
    [{ key: "op", flag: "--op", kind: "string", nullable: false, required: false, values: ["read", "write"] }],
    ["path"],
  );
  const path = args.path as string | undefined;
  const op = (args.op as string | undefined) ?? "write";
  if (!path) throw new UsageError("Name the file: arbeit track <path> [--op read|write].");
  if (op !== "read" && op !== "write") throw new UsageError(`--op is read or write, not ${JSON.stringify(op)}.`);
  const ctx = cliToolContext(options);
  try {
    // The same step on the project's store or, in a checkout that uses a service, on the service.
    const remote = serviceTarget({ cwd: ctx.cwd, db: ctx.db });
    const spelled = remote?.root ?? locate({ cwd: ctx.cwd, db: ctx.db })?.root ?? ctx.cwd;
    const relative = localRelative(resolveLikeKernel(spelled) ?? spelled, fromDirectory(process.cwd(), path));
    const run = remote ? remoteRunner(remote, process.env, ctx.caller.list_id) : localRunner(ctx.service, ctx.caller);
    // Without a project there is nothing to track in: opening the store says so.
    if (!remote) await ctx.service();
    if (relative === undefined)
      return printEnvelope(
        { success: true, data: { tracked: false, reason: "outside_project" } },
        wantsJson(options.json),
      );
    const { results } = await run(
      trackCommandStep,
      { touches: [{ path: relative, operation: op }] },
      { session: ctx.caller.session },
    );
    return printEnvelope({ success: true, data: results[0] }, wantsJson(options.json));
  } catch (error) {
    return printEnvelope(failure(error), wantsJson(options.json));
  } finally {
    await ctx.close();
  }
}
