import { fromDirectory } from "../domain/paths.js";
import { serviceTarget } from "../remote/target.js";
import { serviceCheckout } from "../store/store-record.js";
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
    // File tracking is not a tool the service takes yet; ARBEIT_URL must not make it write locally.
    const remote = serviceTarget({ cwd: ctx.cwd, db: ctx.db });
    if (remote)
      throw serviceCheckout(remote.url, remote.from === "record" ? "recorded in .arbeit/" : "ARBEIT_URL", remote.root);
    const service = await ctx.service();
    const result = await service.trackFile({ path: fromDirectory(process.cwd(), path), operation: op }, ctx.caller);
    return printEnvelope({ success: true, data: result.data }, wantsJson(options.json));
  } catch (error) {
    return printEnvelope(failure(error), wantsJson(options.json));
  } finally {
    await ctx.close();
  }
}
