import { type MigrationStep, migrateProjectStore } from "../maintenance/migrate-store.js";
import { failure } from "../tools/envelope.js";
import type { GlobalOptions } from "./global-options.js";
import { maintenanceArgs } from "./maintenance-args.js";
import { printEnvelope, wantsJson } from "./output.js";
import { storeWhere } from "./project-store.js";
import { terminalSafe } from "./terminal-text.js";

const USAGE = `Usage: arbeit migrate [--dry-run]

Upgrades this project's store to this release's schema: the one deliberate step of an upgrade.
A shared Postgres store (ARBEIT_DATABASE_URL) is migrated only by this command and by
\`arbeit serve\` at start, never by a teammate's call: a CLI, hook or MCP process of a newer
release meeting an older schema is refused with SCHEMA_TOO_OLD and changes nothing. Migrations are
expands unless marked otherwise, so the release the team used before keeps working on the
migrated store (docs/postgres.md#upgrading-a-shared-store). Runs in one transaction under the
schema's write lock; agents keep working meanwhile. A SQLite store is migrated by every open
anyway; here it is brought forward the same way.

  --dry-run   say what would be applied, and change nothing
`;

function renderText(step: MigrationStep): string {
  const kinds = (list: MigrationStep["applied"]) => list.map((m) => `  ${m.name} (${m.kind})`);
  const lines = [`${step.engine === "postgres" ? "Postgres" : "SQLite"} store ${step.location}`];
  if (step.dry_run) {
    lines.push(
      step.pending.length === 0
        ? `At schema version ${step.from}: nothing to migrate.`
        : `At schema version ${step.from}; would apply:`,
      ...kinds(step.pending),
    );
  } else if (step.applied.length === 0) lines.push(`At schema version ${step.to}: nothing to migrate.`);
  else lines.push(`Migrated from schema version ${step.from} to ${step.to}:`, ...kinds(step.applied));
  if (step.engine === "postgres" && !step.dry_run)
    lines.push(`Arbeit releases that know schema version ${step.oldest_compatible} or later work on it.`);
  return terminalSafe(`${lines.join("\n")}\n`, { newlines: true });
}

/** `arbeit migrate`: the deliberate upgrade of the project's store. */
export async function run(argv: string[], options: GlobalOptions): Promise<number> {
  if (options.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const { flags } = maintenanceArgs(argv, { flags: ["dry-run"], positionals: { min: 0, max: 0 } }, USAGE);
  try {
    const step = await migrateProjectStore({ ...storeWhere(options), dryRun: flags.has("dry-run") });
    if (wantsJson(options.json)) return printEnvelope({ success: true, data: step }, true);
    process.stdout.write(renderText(step));
    return 0;
  } catch (error) {
    return printEnvelope(failure(error), wantsJson(options.json));
  }
}
