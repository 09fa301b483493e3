#!/usr/bin/env node
// Renders the per-file times `npm test` records (test-results/times.json) as a Markdown table,
// slowest first, with the totals of each runner.
//
//   node scripts/test-times.mjs [times.json] [--before other.json] [--top N]
//   node scripts/test-times.mjs [times.json] --save-durations
//
// --before adds the wall time each file took in another run (the same file format) beside it.
// --save-durations writes the run's wall times to scripts/test-runner/durations.json, the order
// in which the runner starts files (longest first).
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const args = process.argv.slice(2);
const option = (name) => {
  const at = args.indexOf(name);
  return at < 0 ? undefined : args.splice(at, 2)[1];
};
const beforePath = option("--before");
const top = Number(option("--top") ?? Number.POSITIVE_INFINITY);
const save = args.includes("--save-durations");
const path = args.find((arg) => !arg.startsWith("--")) ?? join(root, "test-results", "times.json");

const read = (file) => JSON.parse(readFileSync(file, "utf8"));
// Piped into `head`, the reader may go before the table ends.
process.stdout.on("error", () => process.exit(0));
const run = read(path);
const key = (entry) => `${entry.runner} ${entry.file}`;

if (save) {
  const durations = { node: {}, bun: {} };
  for (const entry of run.files) durations[entry.runner][entry.file] = entry.wallMs;
  writeFileSync(join(root, "scripts", "test-runner", "durations.json"), `${JSON.stringify(durations, null, 2)}\n`);
  process.stdout.write(`saved the durations of ${run.files.length} files\n`);
  process.exit(0);
}

const before = beforePath ? new Map(read(beforePath).files.map((entry) => [key(entry), entry])) : undefined;
const seconds = (ms) => (ms === undefined ? "" : (ms / 1000).toFixed(1));
const rows = [...run.files].sort((a, b) => b.wallMs - a.wallMs);
const header = ["file", "runner", "tests", "wall s", "cpu s", ...(before ? ["wall s before"] : [])];
const lines = [`| ${header.join(" | ")} |`, `|${header.map((_, i) => (i < 2 ? "---" : "---:")).join("|")}|`];
for (const entry of rows.slice(0, top)) {
  lines.push(
    `| ${[
      entry.file,
      entry.runner,
      entry.passed + entry.failed + entry.skipped,
      seconds(entry.wallMs),
      seconds(entry.cpuMs),
      ...(before ? [seconds(before.get(key(entry))?.wallMs)] : []),
    ].join(" | ")} |`,
  );
}
for (const runner of ["node", "bun"]) {
  const of = run.files.filter((entry) => entry.runner === runner);
  if (of.length === 0) continue;
  const sum = (list, field) => list.reduce((total, entry) => total + (entry[field] ?? 0), 0);
  // The same files in the other run, so that the two totals compare like with like.
  const earlier = before ? of.map((entry) => before.get(key(entry))).filter((entry) => entry !== undefined) : [];
  lines.push(
    `| all ${of.length} files | ${runner} | ${of.reduce((n, e) => n + e.passed + e.failed + e.skipped, 0)} | ${seconds(
      sum(of, "wallMs"),
    )} | ${seconds(sum(of, "cpuMs"))} |${before ? ` ${seconds(sum(earlier, "wallMs"))} |` : ""}`,
  );
}
process.stdout.write(`${lines.join("\n")}\n`);
process.stdout.write(
  `\nThe run: ${seconds(run.wallMs)} s of wall time, ${run.concurrency} files at a time on ${run.cores} cores (load average ${run.loadAverage?.toFixed(1)} at the end), ${run.date}.\n`,
);
