import { closeSync, openSync, rmSync, writeSync } from "node:fs";
import { resolve } from "node:path";
import { exportStore } from "../maintenance/export.js";
import { openProjectStore } from "../maintenance/open-store.js";
import { failure } from "../tools/envelope.js";
import type { GlobalOptions } from "./global-options.js";
import { maintenanceArgs } from "./maintenance-args.js";
import { printEnvelope, wantsJson } from "./output.js";
import { progressBar } from "./progress-bar.js";

const USAGE = `Usage: arbeit export [<file> | -]

Writes every table (tasks, relationships, context, progress, sessions, files, events, claims,
memory ...) as JSON Lines: a header line with the format and schema version, then one line per
row. To <file> (a new file; never overwritten) with a summary on stdout, or to stdout when no
file or "-" is given. Taken from one snapshot while agents keep working. Format: docs/maintenance.md.
`;

export async function run(argv: string[], options: GlobalOptions): Promise<number> {
  if (options.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const { positionals } = maintenanceArgs(argv, { flags: [], positionals: { min: 0, max: 1 } }, USAGE);
  const target = positionals[0] === undefined || positionals[0] === "-" ? undefined : resolve(positionals[0]);
  let store: Awaited<ReturnType<typeof openProjectStore>> | undefined;
  let fd: number | undefined;
  const bar = progressBar("export");
  try {
    store = await openProjectStore({ cwd: process.cwd(), db: options.db ?? process.env.ARBEIT_DB });
    if (target === undefined) {
      await exportStore(store, (chunk) => void process.stdout.write(chunk), { onProgress: bar.update });
      return 0;
    }
    fd = openSync(target, "wx");
    const out = fd;
    const summary = await exportStore(store, (chunk) => void writeSync(out, chunk), { onProgress: bar.update });
    closeSync(fd);
    fd = undefined;
    bar.finish();
    return printEnvelope({ success: true, data: { path: target, ...summary } }, wantsJson(options.json));
  } catch (error) {
    bar.finish();
    if (fd !== undefined) {
      closeSync(fd);
      rmSync(target!, { force: true });
    }
    return printEnvelope(failure(error), wantsJson(options.json));
  } finally {
    bar.finish();
    await store?.close();
  }
}
