import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { copyFileSync, cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { tempDir } from "../helpers/temp.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const SKIPS = "test/runner/skips.fixture.ts";
const FAILING = "test/runner/failing.fixture.ts";

const temp = tempDir("arbeit-runner-");
after(() => temp.cleanup());
let runs = 0;

/** `npm test -- <args>` in a process of its own, its timing file kept in a folder of the test's. */
function runTests(args: string[], env: Record<string, string> = {}, script = join(ROOT, "scripts", "test.mjs")) {
  // Without the outer runner's NODE_TEST_CONTEXT, which would make the inner run report to it.
  const { NODE_TEST_CONTEXT: _, ...outer } = process.env;
  const results = join(temp.dir, `results-${++runs}`);
  const result = spawnSync(process.execPath, [script, ...args], {
    cwd: ROOT,
    env: { ...outer, CI: "false", ARBEIT_TEST_RESULTS: results, ...env },
    encoding: "utf8",
    timeout: 180_000,
  });
  return { code: result.status, output: result.stdout + result.stderr, results };
}

describe("npm test's summary line", () => {
  it("counts a skipped test and a skipped describe block, and names both", () => {
    const { code, output } = runTests([SKIPS]);
    assert.equal(code, 0, output);
    assert.match(output, /^1 passed, 0 failed, 2 skipped$/m);
    assert.match(output, /a suite that needs a missing host \(skip: no such host here\)/);
    assert.match(output, /skips one test \(skip: not on this machine\)/);
  });

  it("fails under CI=true when anything skipped", () => {
    const { code, output } = runTests([SKIPS], { CI: "true" });
    assert.equal(code, 1, output);
    assert.match(output, /Under CI=true nothing may skip/);
    assert.match(output, /^1 passed, 1 failed, 2 skipped$/m);
  });

  it("repeats each failed test at the end, by file and name, with its error", () => {
    const { code, output } = runTests([FAILING, SKIPS]);
    assert.equal(code, 1, output);
    assert.match(output, /^2 passed, 1 failed, 2 skipped$/m);
    const end = output.slice(output.lastIndexOf("\nFailed (1):"));
    assert.match(end, /^ {2}- node test\/runner\/failing\.fixture\.ts: arithmetic › adds two and two$/m);
    assert.match(end, /two and two make four/);
  });
});

describe("npm test's choice of files and tests", () => {
  it("runs files side by side", () => {
    // Two files that each pass only while the other one is running too.
    const dir = join(temp.dir, "side-by-side");
    const marks = join(dir, "marks");
    mkdirSync(marks, { recursive: true });
    for (const name of ["first.test.ts", "second.test.ts"])
      copyFileSync(join(ROOT, "test/runner/partner.fixture.ts"), join(dir, name));
    const { code, output } = runTests([dir], { ARBEIT_RUNNER_FIXTURE_DIR: marks, ARBEIT_TEST_CONCURRENCY: "2" });
    assert.equal(code, 0, output);
    assert.match(output, /^2 passed, 0 failed, 0 skipped$/m);
  });

  it("runs only the tests whose name matches a pattern, not counting the others as skipped", () => {
    const { code, output } = runTests([FAILING, SKIPS, "^passes$"]);
    assert.equal(code, 0, output);
    assert.match(output, /^2 passed, 0 failed, 0 skipped$/m);
  });

  it("records each file's wall and processor time", () => {
    const { code, output, results } = runTests([FAILING, SKIPS]);
    assert.equal(code, 1, output);
    const times = JSON.parse(readFileSync(join(results, "times.json"), "utf8"));
    assert.deepEqual(
      times.files.map((file: { runner: string; file: string }) => `${file.runner} ${file.file}`).sort(),
      [`node ${FAILING}`, `node ${SKIPS}`],
    );
    for (const file of times.files) {
      assert.ok(file.wallMs > 0 && file.cpuMs > 0, JSON.stringify(file));
      // Node alone takes tens of milliseconds of processor time to start.
      assert.ok(file.cpuMs >= 20, `${file.file}: the processor time of its processes, ${file.cpuMs} ms`);
    }
    assert.equal(times.files.find((file: { file: string }) => file.file === FAILING).failed, 1);
  });

  it("--changed runs the test files that import, directly or through others, what changed since main", () => {
    // A small repository of its own with the runner in it: main, then a branch that changes one module.
    const repo = join(temp.dir, "repo");
    const git = (...args: string[]) => {
      const result = spawnSync("git", args, { cwd: repo, encoding: "utf8" });
      assert.equal(result.status, 0, result.stderr);
    };
    const write = (path: string, text: string) => {
      mkdirSync(join(repo, path, ".."), { recursive: true });
      writeFileSync(join(repo, path), text);
    };
    cpSync(join(ROOT, "scripts"), join(repo, "scripts"), { recursive: true });
    write("src/core.ts", "export const core = 1;\n");
    write("src/middle.ts", 'import { core } from "./core.js";\nexport const middle = core;\n');
    write("src/cli/main.ts", 'import { middle } from "../middle.js";\nconsole.log(middle);\n');
    write("src/apart.ts", "export const apart = 2;\n");
    write("test/through.test.ts", 'import { middle } from "../src/middle.js";\n');
    write("test/spawns.test.ts", 'const CLI = new URL("../dist/cli/main.js", import.meta.url);\n');
    write("test/apart.test.ts", 'import { apart } from "../src/apart.js";\n');
    write("migrations/001.sql", "CREATE TABLE t (x int);\n");
    write("src/store.ts", 'const dir = new URL("../migrations/", import.meta.url);\n');
    write("test/store.test.ts", 'import "../src/store.js";\n');
    git("init", "-q", "-b", "main");
    git("-c", "user.email=t@t", "-c", "user.name=t", "add", ".");
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "start");
    git("checkout", "-qb", "work");
    write("src/core.ts", "export const core = 3;\n");
    const list = (script: string) =>
      runTests(["--list", "--changed"], {}, join(repo, "scripts", script))
        .output.split("\n")
        .filter((line) => line.startsWith("node "));
    assert.deepEqual(list("test.mjs"), ["node test/spawns.test.ts", "node test/through.test.ts"]);
    git("checkout", "-q", "src/core.ts");
    write("migrations/002.sql", "ALTER TABLE t ADD y int;\n");
    assert.deepEqual(list("test.mjs"), ["node test/store.test.ts"]);
  });
});
