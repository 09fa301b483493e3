import { type DoctorReport, INFORMATIONAL_CHECKS, runDoctor } from "../maintenance/doctor.js";
import type { GlobalOptions } from "./global-options.js";
import { maintenanceArgs } from "./maintenance-args.js";
import { wantsJson } from "./output.js";
import { progressBar } from "./progress-bar.js";
import { onProjectStore } from "./project-store.js";
import { terminalSafe } from "./terminal-text.js";

const USAGE = `Usage: arbeit doctor [--fix]

Checks the database: integrity_check, foreign keys, relationships whose end is missing (or that
were made to a task after it was deleted), claims whose lease ran out, broken leases, that every
task, relationship, context entry and progress item matches its event history, and that every row
keeps the rules the tools keep (ids, enums, limits, JSON, no cycles, depth, the event counter).
Relationships left to deleted tasks are history: listed for information, never a failure.
Prints {ok, checks: [{name, ok, findings, total}]}; exit 0 when all is well, 1 when anything was
found. --fix removes relationships to deleted tasks and releases expired claims, recording each
repair as an event; it never touches anything else.
`;

function renderText(report: DoctorReport): string {
  const lines = report.checks.map((check) => {
    const status = !check.ok ? "FAIL" : INFORMATIONAL_CHECKS.includes(check.name) && check.total > 0 ? "info" : "ok  ";
    const head = `${status} ${check.name}${check.total ? ` (${check.total})` : ""}${check.fixed ? `, fixed ${check.fixed}` : ""}`;
    return [head, ...check.findings.map((finding) => `       ${finding.message}`)].join("\n");
  });
  // Findings quote stored values (a title the history disagrees with), as they are.
  return terminalSafe(`${lines.join("\n")}\n${report.ok ? "No problems found." : "Problems found."}\n`, {
    newlines: true,
  });
}

export async function run(argv: string[], options: GlobalOptions): Promise<number> {
  if (options.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const { flags } = maintenanceArgs(argv, { flags: ["fix"], positionals: { min: 0, max: 0 } }, USAGE);
  return onProjectStore(options, async (store) => {
    const bar = progressBar("doctor");
    const report = await runDoctor(store, { fix: flags.has("fix"), onProgress: bar.update }).finally(() =>
      bar.finish(),
    );
    process.stdout.write(wantsJson(options.json) ? `${JSON.stringify(report)}\n` : renderText(report));
    return report.ok ? 0 : 1;
  });
}
