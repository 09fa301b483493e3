import { resolve } from "node:path";
import { backupStore } from "../maintenance/backup.js";
import type { GlobalOptions } from "./global-options.js";
import { maintenanceArgs } from "./maintenance-args.js";
import { printEnvelope, wantsJson } from "./output.js";
import { onProjectStore } from "./project-store.js";

const USAGE = `Usage: arbeit backup <file>

Writes a consistent copy of the database to <file> (a new file; never overwritten) while agents
keep working, and checks the copy with integrity_check. Restore by copying it back to
.arbeit/arbeit.db while nothing is running, or use it directly with --db <file>.
`;

export async function run(argv: string[], options: GlobalOptions): Promise<number> {
  if (options.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const { positionals } = maintenanceArgs(argv, { flags: [], positionals: { min: 1, max: 1 } }, USAGE);
  return onProjectStore(options, async (store) => {
    const summary = await backupStore(store, resolve(positionals[0]!));
    return printEnvelope({ success: true, data: summary }, wantsJson(options.json));
  });
}
