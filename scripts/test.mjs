#!/usr/bin/env node
// `npm test`: typecheck, lint and build, then every test file under Node and the store and service
// suites again under Bun (the runtime the OpenCode plugin uses), several files side by side. Ends
// with one "N passed, N failed, N skipped" line summing both runners. Every skip is listed by name:
// a suite that skips itself (no Postgres, no host binary) must never pass unnoticed. Under CI=true
// nothing may skip: CI installs everything the tests need, so a skip there is a failure.
//
//   npm test                          everything
//   npm test -- test/cli test/x.test.ts   chosen files and folders
//   npm test -- "claims? expire"      tests whose name matches (a regular expression), in every file
//   npm test -- --changed             the files that import what changed since main (scripts/test-runner/changed.mjs)
//   npm test -- --list ...            print the files it would run, run nothing
//
// ARBEIT_TEST_CONCURRENCY sets how many files run at once; ARBEIT_TEST_FILE_TIMEOUT (seconds) when
// a file still running is stopped and failed. Each run writes per-file wall and processor times to
// test-results/times.json (or into ARBEIT_TEST_RESULTS); `node scripts/test-times.mjs` renders them.
import { spawn } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { changedFiles, testsAffectedBy } from "./test-runner/changed.mjs";
import { killAll, pool, runJob } from "./test-runner/pool.mjs";
import { readBunReport, readNodeTap } from "./test-runner/reports.mjs";

const root = new URL("..", import.meta.url).pathname;
const bin = (name) => join(root, "node_modules", ".bin", name);
const started = performance.now();

const args = process.argv.slice(2);
const list = args.includes("--list");
const changed = args.includes("--changed");
const paths = [];
const namePatterns = [];
for (const arg of args.filter((one) => one !== "--list" && one !== "--changed")) {
  if (existsSync(resolve(root, arg))) paths.push(relative(root, resolve(root, arg)));
  else if (/\.[cm]?[jt]s$/.test(arg) || arg.startsWith("test/")) {
    process.stdout.write(`No such test file or folder: ${arg}\n0 passed, 1 failed, 0 skipped\n`);
    process.exit(1);
  } else namePatterns.push(arg);
}
const whole = args.length === 0;

function testFiles(path) {
  if (!statSync(join(root, path)).isDirectory()) return [path];
  const out = [];
  for (const name of readdirSync(join(root, path))) {
    const child = join(path, name);
    if (statSync(join(root, child)).isDirectory()) out.push(...testFiles(child));
    else if (name.endsWith(".test.ts")) out.push(child);
  }
  return out;
}

let files = [...new Set((paths.length > 0 ? paths : ["test"]).flatMap(testFiles))].sort();
if (changed) {
  const touched = changedFiles(root);
  files = testsAffectedBy(root, touched, files);
  process.stdout.write(`\n== changed since main: ${touched.length} files; ${files.length} test files import them\n`);
}

// Under Bun too: the store and the rules (the OpenCode plugin runs them inside Bun) and the
// plugin's own unit tests; not the tests that drive other processes.
const bunFiles = files.filter(
  (file) =>
    /^test\/(store|service|domain|multi-agent|opencode)\//.test(file) &&
    !file.endsWith(".process.test.ts") &&
    !file.endsWith("opencode-run.test.ts"),
);

if (list) {
  for (const file of files) process.stdout.write(`node ${file}\n`);
  for (const file of bunFiles) process.stdout.write(`bun ${file}\n`);
  process.exit(0);
}

const ciStrict =
  process.env.CI !== undefined && process.env.CI !== "" && process.env.CI !== "false" && process.env.CI !== "0";
const concurrency =
  Number(process.env.ARBEIT_TEST_CONCURRENCY) || Math.max(2, Math.round(availableParallelism() * 2.5));
const fileTimeoutMs = (Number(process.env.ARBEIT_TEST_FILE_TIMEOUT) || 20 * 60) * 1000;

process.on("SIGINT", () => {
  killAll();
  process.exit(130);
});
process.on("SIGTERM", () => {
  killAll();
  process.exit(143);
});

/** Prints a finished job's output whole, under a header naming it. */
function printJob(label, result, summary) {
  const seconds = (result.wallMs / 1000).toFixed(1);
  const cpu = result.cpuMs === undefined ? "" : `, cpu ${(result.cpuMs / 1000).toFixed(1)} s`;
  process.stdout.write(`\n── ${label}: ${summary} (${seconds} s${cpu})\n${result.output.trimEnd()}\n`);
}

if (whole) {
  // The checks before the tests run side by side; the tests need the build, and stop on any failure.
  const checks = [
    ["typecheck", bin("tsc"), ["-p", "tsconfig.json", "--noEmit"]],
    ["typecheck the dashboard's page", bin("tsc"), ["-p", "src/ui/app/tsconfig.json", "--noEmit"]],
    ["lint", bin("biome"), ["check", "src", "test", "scripts", "bench"]],
    ["build", process.execPath, [join(root, "scripts", "build.mjs")]],
  ];
  process.stdout.write(`\n== ${checks.map(([label]) => label).join(", ")}\n`);
  const results = await pool(
    checks.map(
      ([, command, commandArgs]) =>
        () =>
          runJob({ command, args: commandArgs, cwd: root, env: process.env, timeoutMs: fileTimeoutMs }),
    ),
    checks.length,
    (result, index) => printJob(checks[index][0], result, result.code === 0 ? "ok" : "FAILED"),
  );
  const failedCheck = results.findIndex((result) => result.code !== 0);
  if (failedCheck >= 0) {
    process.stdout.write(`\n${checks[failedCheck][0]} failed.\n0 passed, 1 failed, 0 skipped\n`);
    process.exit(1);
  }
}

/**
 * The real host binaries (Claude Code, OpenCode, Bun) are no dependencies of the checkout: they
 * are installed here, into the test cache, before the tests (scripts/host-binaries.ts; the first
 * run installs about 690 MB). A full run installs all of them, so test files running side by
 * side find them in place; a run of chosen files installs only Bun, when it runs them under
 * Bun, and each file installs what else it needs. Returns host -> path, or -> undefined with the
 * reason printed when it could not be installed (the tests needing it then skip, saying why, or
 * fail under CI=true).
 */
async function hostBinaries(hosts) {
  process.stdout.write(
    `\n== host binaries for the end-to-end tests (${hosts.length > 0 ? hosts.join(", ") : "all"})\n`,
  );
  const output = await new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", join(root, "scripts", "host-binaries.ts"), ...hosts], {
      cwd: root,
      stdio: ["ignore", "pipe", "inherit"],
    });
    let text = "";
    child.stdout.on("data", (chunk) => (text += chunk));
    child.on("close", () => resolve(text));
  });
  const found = new Map();
  for (const line of output.split("\n")) {
    const [host, path] = line.split("\t");
    if (host) found.set(host, path || undefined);
  }
  return found;
}

const hosts = whole ? await hostBinaries([]) : bunFiles.length > 0 ? await hostBinaries(["bun"]) : new Map();
const bunPath = hosts.get("bun");

/**
 * The order files start in: the longest first, by the durations of an earlier run
 * (scripts/test-runner/durations.json), so that no long file starts last and runs alone at the end.
 * A file with no recorded duration counts as a long one.
 */
function expectedMs(runner, file) {
  const path = join(root, "scripts", "test-runner", "durations.json");
  expectedMs.known ??= existsSync(path) ? JSON.parse(readFileSync(path, "utf8")) : {};
  return expectedMs.known[runner]?.[file] ?? 120_000;
}

const tapDir = mkdtempSync(join(tmpdir(), "arbeit-test-"));
const nodeArgs = namePatterns.map((pattern) => `--test-name-pattern=${pattern}`);
const bunArgs = namePatterns.length > 0 ? ["-t", namePatterns.join("|")] : [];

const jobs = [];
for (const file of files) {
  jobs.push({
    runner: "node",
    file,
    run: async () => {
      // TAP beside the readable report: Node's own summary does not count a skipped describe
      // block, while TAP marks every skipped test and suite with a SKIP directive.
      const tapFile = join(tapDir, `${file.replaceAll("/", "_")}.tap`);
      const result = await runJob({
        command: process.execPath,
        args: [
          "--import",
          "tsx",
          "--test",
          ...nodeArgs,
          "--test-reporter=spec",
          "--test-reporter-destination=stdout",
          "--test-reporter=tap",
          `--test-reporter-destination=${tapFile}`,
          file,
        ],
        cwd: root,
        env: process.env,
        timeoutMs: fileTimeoutMs,
      });
      const tap = existsSync(tapFile) ? readFileSync(tapFile, "utf8") : "";
      return { ...result, ...readNodeTap(tap, { namePattern: namePatterns.length > 0 }) };
    },
  });
}
const skippedBun = [];
if (bunFiles.length > 0 && !bunPath) {
  const why = "Bun could not be installed (see the host binaries step above)";
  skippedBun.push(why);
} else {
  for (const file of bunFiles) {
    jobs.push({
      runner: "bun",
      file,
      run: async () => {
        // Bun's default limit is 5 s a test, Node's none: on a busy machine a sound test must not fail for time.
        const result = await runJob({
          command: bunPath,
          args: ["test", "--timeout", "300000", ...bunArgs, `./${file}`],
          cwd: root,
          env: process.env,
          timeoutMs: fileTimeoutMs,
        });
        const report = readBunReport(result.output);
        // A name pattern that matches nothing in a file is not a failure of that file.
        if (namePatterns.length > 0 && /matched 0 tests/.test(result.output)) return { ...result, ...report, code: 0 };
        return { ...result, ...report };
      },
    });
  }
}
jobs.sort((a, b) => expectedMs(b.runner, b.file) - expectedMs(a.runner, a.file));

process.stdout.write(
  `\n== ${files.length} test files under Node, ${jobs.length - files.length} under Bun, ${concurrency} at a time\n`,
);
const results = await pool(
  jobs.map((job) => job.run),
  concurrency,
  (result, index) => {
    const job = jobs[index];
    // A file that ended badly without a failing test (it crashed, could not load, timed out)
    // fails as a whole, named by its file.
    if ((result.code !== 0 || result.timedOut) && result.failures.length === 0) {
      const why = result.timedOut
        ? `stopped after ${fileTimeoutMs / 1000} s (ARBEIT_TEST_FILE_TIMEOUT)`
        : `exited with ${result.signal ?? `code ${result.code}`} without a failing test`;
      result.failures.push({ name: `(the file) ${why}`, error: "" });
      result.failed = Math.max(result.failed, 1);
    }
    const verdict = result.failures.length > 0 ? "FAILED" : "ok";
    printJob(
      `${job.runner} ${job.file}`,
      result,
      `${verdict}, ${result.passed} passed, ${result.failed} failed, ${result.skipped.length} skipped`,
    );
  },
);
rmSync(tapDir, { recursive: true, force: true });

const total = { node: { passed: 0, failed: 0 }, bun: { passed: 0, failed: 0 } };
const skipped = skippedBun.map((why) => `bun: every test under Bun (${why})`);
const failures = [];
results.forEach((result, index) => {
  const { runner, file } = jobs[index];
  total[runner].passed += result.passed;
  total[runner].failed += result.failed;
  for (const name of result.skipped) skipped.push(`${runner} ${file}: ${name}`);
  for (const failure of result.failures)
    failures.push(`${runner} ${file}: ${failure.name}${failure.error ? `\n      ${failure.error}` : ""}`);
});

const wallMs = Math.round(performance.now() - started);
const resultsDir = process.env.ARBEIT_TEST_RESULTS || join(root, "test-results");
mkdirSync(resultsDir, { recursive: true });
writeFileSync(
  join(resultsDir, "times.json"),
  `${JSON.stringify(
    {
      date: new Date().toISOString(),
      concurrency,
      cores: availableParallelism(),
      loadAverage: loadavg()[0],
      wallMs,
      files: results.map((result, index) => ({
        runner: jobs[index].runner,
        file: jobs[index].file,
        wallMs: result.wallMs,
        cpuMs: result.cpuMs,
        passed: result.passed,
        failed: result.failed,
        skipped: result.skipped.length,
      })),
    },
    null,
    2,
  )}\n`,
);

const passed = total.node.passed + total.bun.passed;
let failed = total.node.failed + total.bun.failed;
if (failures.length > 0) {
  process.stdout.write(`\nFailed (${failures.length}):\n${failures.map((line) => `  - ${line}`).join("\n")}\n`);
}
if (skipped.length > 0) {
  process.stdout.write(`\nSkipped (${skipped.length}):\n${skipped.map((name) => `  - ${name}`).join("\n")}\n`);
  if (ciStrict) {
    process.stdout.write("Under CI=true nothing may skip: install what the skipped tests need (see .ci/run).\n");
    failed += 1;
  }
}
process.stdout.write(
  `\nNode: ${total.node.passed} passed, ${total.node.failed} failed; Bun: ${total.bun.passed} passed, ${total.bun.failed} failed` +
    ` (${(wallMs / 1000).toFixed(0)} s, ${concurrency} files at a time)\n`,
);
process.stdout.write(`${passed} passed, ${failed} failed, ${skipped.length} skipped\n`);
process.exit(failed > 0 || passed === 0 ? 1 : 0);
