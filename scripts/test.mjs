#!/usr/bin/env node
// `npm test`: typecheck, lint, build, then every test file under Node and the store and
// service suites again under Bun (the runtime the OpenCode plugin uses). Ends with one
// "N passed, N failed" line summing both runners.
import { spawn } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
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
  await step("lint", bin("biome"), ["check", "src", "test", "scripts", "bench"]);
  await step("build", process.execPath, [join(root, "scripts", "build.mjs")]);
}

const files = only.length > 0 ? only : testFiles(join(root, "test"));
// Under Bun too: the store and the rules (the OpenCode plugin runs them inside Bun) and the
// plugin's own unit tests; not the tests that drive other processes.
const bunFiles = files.filter(
  (file) =>
    /^test\/(store|service|domain|multi-agent|opencode)\//.test(file) &&
    !file.endsWith(".process.test.ts") &&
    !file.endsWith("opencode-run.test.ts"),
);

process.stdout.write("\n== tests under Node\n");
const node = await run(process.execPath, ["--import", "tsx", "--test", "--test-reporter=spec", ...files], {
  capture: true,
});
const nodePass = Number(/[#ℹ] pass (\d+)/.exec(node.output)?.[1] ?? 0);
const nodeFail = Number(/[#ℹ] fail (\d+)/.exec(node.output)?.[1] ?? (node.code === 0 ? 0 : 1));

let bunPass = 0;
let bunFail = 0;
if (bunFiles.length > 0) {
  process.stdout.write("\n== store and service tests under Bun\n");
  const bun = await run(bin("bun"), ["test", ...bunFiles.map((file) => `./${file}`)], { capture: true });
  bunPass = Number(/^\s*(\d+) pass/m.exec(bun.output)?.[1] ?? 0);
  bunFail = Number(/^\s*(\d+) fail/m.exec(bun.output)?.[1] ?? (bun.code === 0 ? 0 : 1));
  if (bun.code !== 0 && bunFail === 0) bunFail = 1;
}

const passed = nodePass + bunPass;
const failed = nodeFail + bunFail + (node.code !== 0 && nodeFail === 0 ? 1 : 0);
process.stdout.write(`\nNode: ${nodePass} passed, ${nodeFail} failed; Bun: ${bunPass} passed, ${bunFail} failed\n`);
process.stdout.write(`${passed} passed, ${failed} failed\n`);
process.exit(failed > 0 || passed === 0 ? 1 : 0);
