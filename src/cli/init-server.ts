import { serviceUrl } from "../remote/service-url.js";
import { initProject } from "../service/project.js";
import { failure } from "../tools/envelope.js";
import type { GlobalOptions } from "./global-options.js";
import { printEnvelope, wantsJson } from "./output.js";
import { parseFlags } from "./schema-flags.js";
import { inCommand, UsageError } from "./usage-error.js";

/**
 * `arbeit init --server URL`: this checkout uses the team's `arbeit serve` service. Only its URL is
 * recorded (`.arbeit/config.json`); no local database is made and no token is written into the
 * project (`arbeit login URL` keeps it in the user's config).
 */
export async function initServer(argv: string[], options: GlobalOptions): Promise<number> {
  const args = inCommand("init", () =>
    parseFlags(
      argv,
      [
        { key: "server", flag: "--server", kind: "string", nullable: false, required: true },
        { key: "nested", flag: "--nested", kind: "boolean", nullable: false, required: false },
      ],
      [],
    ),
  );
  if (options.db ?? process.env.ARBEIT_DB)
    throw new UsageError("--server and --db (or ARBEIT_DB) name two different stores; give one.", undefined, "init");
  try {
    const url = serviceUrl(args.server as string, "--server");
    const made = await initProject({ cwd: process.cwd(), server: url, nested: args.nested === true });
    return printEnvelope({ success: true, data: made }, wantsJson(options.json));
  } catch (error) {
    return printEnvelope(failure(error), wantsJson(options.json));
  }
}
