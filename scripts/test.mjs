#!/usr/bin/env node
// `npm test`: typecheck, lint, build, then every test file under Node and the store and
// service suites again under Bun (the runtime the OpenCode plugin uses). Ends with one
// "N passed, N failed, N skipped" line summing both runners. Every skip is listed by name: a
// suite that skips itself (no Postgres, no host binary) must never pass unnoticed. Under
// CI=true nothing may skip: CI installs everything the tests need, so a skip there is a failure.
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const bin = (name) => join(root, "node_modules", ".bin", name);
const only = process.argv.slice(2);

function run(command, args, { capture = false } = {}) {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: root,
      stdio: ["ignore", capture ? "pipe" : "inherit", capture ? "pipe" : "inherit"],
    });
    let output = "";
    if (capture) {
      child.stdout.on("data", (chunk) => {
        output += chunk;
        process.stdout.write(chunk);
      });
      child.stderr.on("data", (chunk) => {
        output += chunk;
        process.stderr.write(chunk);
      });
    }
    child.on("close", (code) => resolve({ code: code ?? 1, output }));
  });
}

function testFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...testFiles(path));
    else if (name.endsWith(".test.ts")) out.push(relative(root, path));
  }
  return out.sort();
}

async function step(label, command, args) {
  process.stdout.write(`\n== ${label}\n`);
  const { code } = await run(command, args);
  if (code !== 0) {
    process.stdout.write(`\n${label} failed.\n0 passed, 1 failed\n`);
    process.exit(code);
  }
}

if (only.length === 0) {
  await step("typecheck", bin("tsc"), ["-p", "tsconfig.json", "--noEmit"]);
  await step("typecheck the dashboard's page", bin("tsc"), ["-p", "src/ui/app/tsconfig.json", "--noEmit"]);
  await step("lint", bin("biome"), ["check", "src", "test", "scripts", "bench"]);
  await step("build", process.execPath, [join(root, "scripts", "build.mjs")]);
}

const files = only.length > 0 ? only : testFiles(join(root, "test"));

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
  const { output } = await new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", join(root, "scripts", "host-binaries.ts"), ...hosts], {
      cwd: root,
      stdio: ["ignore", "pipe", "inherit"],
    });
    let text = "";
    child.stdout.on("data", (chunk) => (text += chunk));
    child.on("close", () => resolve({ output: text }));
  });
  const paths = new Map();
  for (const line of output.split("\n")) {
    const [host, path] = line.split("\t");
    if (host) paths.set(host, path || undefined);
  }
  return paths;
}
// Under Bun too: the store and the rules (the OpenCode plugin runs them inside Bun) and the
// plugin's own unit tests; not the tests that drive other processes.
const bunFiles = files.filter(
  (file) =>
    /^test\/(store|service|domain|multi-agent|opencode)\//.test(file) &&
    !file.endsWith(".process.test.ts") &&
    !file.endsWith("opencode-run.test.ts"),
);

const ciStrict =
  process.env.CI !== undefined && process.env.CI !== "" && process.env.CI !== "false" && process.env.CI !== "0";
const hosts =
  only.length === 0 ? await hostBinaries([]) : bunFiles.length > 0 ? await hostBinaries(["bun"]) : new Map();
const bunPath = hosts.get("bun");

process.stdout.write("\n== tests under Node\n");
// TAP beside the readable report: Node's own summary does not count a skipped describe block,
// while TAP marks every skipped test and suite with a SKIP directive.
const tapDir = mkdtempSync(join(tmpdir(), "arbeit-test-"));
const tapFile = join(tapDir, "node.tap");
const node = await run(
  process.execPath,
  [
    "--import",
    "tsx",
    "--test",
    "--test-reporter=spec",
    "--test-reporter-destination=stdout",
    "--test-reporter=tap",
    `--test-reporter-destination=${tapFile}`,
    ...files,
  ],
  { capture: true },
);
const nodePass = Number(/[#ℹ] pass (\d+)/.exec(node.output)?.[1] ?? 0);
const nodeFail = Number(/[#ℹ] fail (\d+)/.exec(node.output)?.[1] ?? (node.code === 0 ? 0 : 1));
const skipped = skipsInTap(readFileSync(tapFile, "utf8")).map((name) => `node: ${name}`);
rmSync(tapDir, { recursive: true, force: true });

/** Every test or suite the TAP report marks as skipped (or left to do), by name. */
function skipsInTap(tap) {
  const out = [];
  for (const line of tap.split("\n")) {
    const match = /^\s*ok \d+ - (.*?) # (SKIP|TODO)\b(.*)$/.exec(line);
    if (match) out.push(`${match[1]} (${match[2].toLowerCase()}${match[3] ? `:${match[3]}` : ""})`);
  }
  return out;
}

let bunPass = 0;
let bunFail = 0;
if (bunFiles.length > 0 && !bunPath) {
  const why = "Bun could not be installed (see the host binaries step above)";
  if (ciStrict) {
    process.stdout.write(`\n${why}: under CI=true that is a failure.\n`);
    bunFail = 1;
  } else {
    process.stderr.write(`\nSKIPPING the tests under Bun: ${why}.\n`);
    skipped.push(`bun: every test under Bun (${why})`);
  }
} else if (bunFiles.length > 0) {
  process.stdout.write("\n== store and service tests under Bun\n");
  // Bun's default limit is 5 s a test, Node's none: on a busy machine a sound test must not fail for time.
  const bun = await run(bunPath, ["test", "--timeout", "300000", ...bunFiles.map((file) => `./${file}`)], {
    capture: true,
  });
  bunPass = Number(/^\s*(\d+) pass/m.exec(bun.output)?.[1] ?? 0);
  bunFail = Number(/^\s*(\d+) fail/m.exec(bun.output)?.[1] ?? (bun.code === 0 ? 0 : 1));
  if (bun.code !== 0 && bunFail === 0) bunFail = 1;
  for (const match of bun.output.matchAll(/^\(skip\) (.*?)(?: \[[\d.]+m?s\])?$/gm)) skipped.push(`bun: ${match[1]}`);
  // Bun reports nothing of a describe block skipped as a whole; test/helpers/requirements.ts
  // announces each such skip on stderr.
  for (const match of bun.output.matchAll(/^SKIPPING (.*)$/gm)) skipped.push(`bun: ${match[1]}`);
  for (const match of bun.output.matchAll(/^\(todo\) (.*?)(?: \[[\d.]+m?s\])?$/gm))
    skipped.push(`bun: ${match[1]} (todo)`);
}

const passed = nodePass + bunPass;
let failed = nodeFail + bunFail + (node.code !== 0 && nodeFail === 0 ? 1 : 0);
if (skipped.length > 0) {
  process.stdout.write(`\nSkipped (${skipped.length}):\n${skipped.map((name) => `  - ${name}`).join("\n")}\n`);
  if (process.env.CI === "true") {
    process.stdout.write("Under CI=true nothing may skip: install what the skipped tests need (see .ci/run).\n");
    failed += 1;
  }
}
process.stdout.write(`\nNode: ${nodePass} passed, ${nodeFail} failed; Bun: ${bunPass} passed, ${bunFail} failed\n`);
process.stdout.write(`${passed} passed, ${failed} failed, ${skipped.length} skipped\n`);
process.exit(failed > 0 || passed === 0 ? 1 : 0);
