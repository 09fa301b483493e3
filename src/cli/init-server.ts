import { isAbsolute, relative, resolve, sep } from "node:path";
import { serviceUrl } from "../remote/service-url.js";
import { caFile } from "../remote/trust.js";
import { initProject } from "../service/project.js";
import { failure } from "../tools/envelope.js";
import type { GlobalOptions } from "./global-options.js";
import { printEnvelope, wantsJson } from "./output.js";
import { parseFlags } from "./schema-flags.js";
import { inCommand, UsageError } from "./usage-error.js";

/**
 * How the project names its CA file: relative to the project root when it is inside it (the file
 * is committed with the project), else as given (a path every teammate's machine has).
 */
function recordedCa(file: string, root: string): string {
  const inside = relative(root, file);
  return inside.startsWith("..") || isAbsolute(inside) ? file : inside.split(sep).join("/");
}

/**
 * `arbeit init --server URL [--ca FILE]`: this project uses the team's `arbeit serve` service. Its
 * URL (and the CA that signed its certificate) go into `.arbeit/service.json`, committed with the
 * project so that every clone uses the service too; no local database is made and no token is
 * written into the project (`arbeit login URL` keeps it in the user's config).
 */
export async function initServer(argv: string[], options: GlobalOptions): Promise<number> {
  const args = inCommand("init", () =>
    parseFlags(
      argv,
      [
        { key: "server", flag: "--server", kind: "string", nullable: false, required: true },
        { key: "nested", flag: "--nested", kind: "boolean", nullable: false, required: false },
        { key: "ca", flag: "--ca", kind: "string", nullable: false, required: false },
      ],
      [],
    ),
  );
  if (options.db ?? process.env.ARBEIT_DB)
    throw new UsageError("--server and --db (or ARBEIT_DB) name two different stores; give one.", undefined, "init");
  try {
    const url = serviceUrl(args.server as string, "--server");
    const cwd = process.cwd();
    const ca = typeof args.ca === "string" ? recordedCa(caFile(resolve(cwd, args.ca), "--ca"), cwd) : undefined;
    const made = await initProject({ cwd, server: { url, ca }, nested: args.nested === true });
    return printEnvelope({ success: true, data: made }, wantsJson(options.json));
  } catch (error) {
    return printEnvelope(failure(error), wantsJson(options.json));
  }
}
