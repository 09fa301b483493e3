import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { openDriver } from "../../src/store/sqlite/open-driver.js";
import { CLI, runCli } from "../helpers/cli.js";
import { requirement } from "../helpers/requirements.js";
import { tempDir } from "../helpers/temp.js";
import { forEachEngine, type HostileProject } from "./engines.js";

/**
 * What the CLI prints on a terminal is read by a terminal: an escape sequence in a title would
 * retitle the window (OSC), clear the screen (CSI), recolour it (C1 CSI), or reorder what is shown
 * (bidi overrides). Every text view shows user text with each control character replaced by a
 * visible escape (`\x1b`, `\u202e`); JSON output keeps the text exactly. Long titles are cut short
 * in lists, never in a task's own view.
 */

const EVIL =
  "Fix \u001b]0;pwned\u0007 \u001b[2J\u001b[31mred\u001b[0m \u009b31mc1\u009b0m \u202egnp.exe\u202c \u2066iso\u2069 bs\u0008 del\u007f cr\r tab\t end";
const EVIL_LINES = "first line\n\u001b[31msecond\u001b[0m line\u0007\nthird \u009b2J line";

/** Anything a terminal would act on: C0 but newline, DEL, C1, bidi embeddings, overrides and isolates. */
function isControl(code: number): boolean {
  return (
    (code < 0x20 && code !== 0x0a) ||
    (code >= 0x7f && code <= 0x9f) ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069)
  );
}

function assertInert(text: string, where: string): void {
  const chars = [...text];
  const index = chars.findIndex((char) => isControl(char.codePointAt(0)!));
  const code = index < 0 ? "" : chars[index]!.codePointAt(0)!.toString(16).padStart(4, "0");
  assert.equal(index, -1, `${where}: U+${code} at ${index} in ${JSON.stringify(text)}`);
}

// A real terminal needs a pseudo-terminal; util-linux `script` provides one on Linux.
const hasScript = spawnSync("script", ["--version"]).status === 0;
const needsScript = requirement(
  "the terminal text tests",
  hasScript ? undefined : "util-linux `script` is not installed to give the CLI a terminal",
);

const quote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`;

/**
 * Runs the CLI with stdout on a terminal, so it prints text; stderr goes to a file, so the two
 * are read apart (text mode depends on stdout only).
 */
function onTerminal(project: Pick<HostileProject, "dir" | "env">, args: string[], session = "ses-term") {
  const errFile = join(project.dir, ".arbeit", `stderr-${Math.random().toString(36).slice(2)}.txt`);
  const command = `${[process.execPath, CLI, ...args].map(quote).join(" ")} 2>${quote(errFile)}`;
  const env: Record<string, string | undefined> = { ...process.env, ...project.env };
  for (const key of ["ARBEIT_DB", "ARBEIT_LIST"]) delete env[key];
  env.ARBEIT_SESSION = session;
  env.ARBEIT_AGENT = "term";
  const result = spawnSync("script", ["-q", "-e", "-c", command, "/dev/null"], {
    cwd: project.dir,
    env,
    encoding: "utf8",
  });
  // The terminal turns each newline into CR LF; nothing else of the output is its own.
  return {
    code: result.status,
    stdout: result.stdout.replaceAll("\r\n", "\n"),
    stderr: readFileSync(errFile, "utf8"),
  };
}

forEachEngine("text output on a terminal neutralises control characters", (project) => {
  let p: HostileProject;
  let evilId: string;
  let otherId: string;
  const caller = { session: "ses-term", agent: "term" };

  const setUp = async () => {
    if (p) return;
    p = await project();
    const created = await p.ok("arbeit_task_create", { title: EVIL, description: EVIL_LINES, plan: EVIL });
    evilId = created.task.id;
    otherId = (await p.ok("arbeit_task_create", { title: "plain" })).task.id;
    // A second one left open, for the views of what is ready.
    await p.ok("arbeit_task_create", { title: EVIL, priority: 0 });
    await p.ok("arbeit_task_start_work", { task_id: evilId }, caller);
    await p.ok("arbeit_context_add", { task_id: evilId, type: "decision", content: EVIL_LINES }, caller);
    await p.ok("arbeit_progress_add", { task_id: evilId, items: [EVIL] }, caller);
    const tracked = await p.service.trackFile({ path: "src/\u001b[2Jevil\u009b.ts", operation: "write" }, caller);
    assert.equal(tracked.data.tracked, true);
    await p.ok("arbeit_memory", { action: "set", key: "k\u001b[2J", value: EVIL, scope: "project" }, caller);
  };

  const VIEWS: Array<[string, () => string[]]> = [
    ["task get with every section", () => ["task", "get", evilId, "--include", "context,progress,files,recent_events"]],
    ["query ready", () => ["query", "ready"]],
    ["query tasks", () => ["query", "tasks"]],
    ["resume", () => ["resume", "--peek"]],
  ];
  for (const [label, args] of VIEWS) {
    it(`${label}: no control character reaches the terminal`, { skip: needsScript }, async () => {
      await setUp();
      const { code, stdout, stderr } = onTerminal(p, args());
      assert.equal(code, 0, stderr);
      assert.doesNotMatch(stdout, /"success"/);
      assertInert(stdout, "stdout");
      assertInert(stderr, "stderr");
      assert.match(stdout, /Fix \\x1b\]0;pwned\\x07 \\x1b\[2J\\x1b\[31mred/, "the escape is shown, not run");
    });
  }

  it("task get shows the multi-line fields on their lines, each line neutralised", { skip: needsScript }, async () => {
    await setUp();
    const { stdout } = onTerminal(p, ["task", "get", evilId]);
    assert.match(stdout, /\n {4}first line\n {4}\\x1b\[31msecond\\x1b\[0m line\\x07\n {4}third \\x9b2J line\n/);
    assert.match(stdout, /\\u202egnp\.exe\\u202c \\u2066iso\\u2069 bs\\x08 del\\x7f cr\\x0d tab\\x09 end/);
  });

  it("an error quoting a title is neutralised on stderr", { skip: needsScript }, async () => {
    await setUp();
    const { code, stdout, stderr } = onTerminal(p, ["task", "start", otherId]);
    assert.equal(code, 1);
    assert.equal(stdout, "");
    assert.match(stderr, /^error ALREADY_WORKING: .*Fix \\x1b\]0;pwned/);
    assertInert(stderr, "stderr");
  });

  it("a usage error quoting an argument is neutralised too", { skip: needsScript }, async () => {
    await setUp();
    const { code, stderr } = onTerminal(p, ["track", "a.ts", "--op", "\u009b2J\u202e"]);
    assert.equal(code, 2);
    assertInert(stderr, "stderr");
    assert.match(stderr, /\\x9b2J\\u202e/);
  });

  it("JSON output keeps the text exactly", async () => {
    await setUp();
    const result = await p.cli(["task", "get", evilId, "--json"]);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.json.data.task.title, EVIL);
    assert.equal(result.json.data.task.description, EVIL_LINES);
  });
});

forEachEngine("long titles on a terminal", (project) => {
  const LONG = `${"Refactor the session store ".repeat(8)}END`;

  it("are cut to 80 columns with an ellipsis in lists, shown whole in the task's own view", {
    skip: needsScript,
  }, async () => {
    const p = await project();
    const id = (await p.ok("arbeit_task_create", { title: LONG })).task.id;
    for (const args of [
      ["query", "ready"],
      ["query", "tasks"],
    ]) {
      const { stdout } = onTerminal(p, args);
      const line = stdout.split("\n").find((row) => row.includes(id))!;
      assert.ok(line, stdout);
      const title = line.slice(line.indexOf("Refactor")).replace(/ {2}\(.*\)$/, "");
      assert.equal([...title].length, 80, line);
      assert.ok(title.endsWith("…"), line);
      assert.ok(LONG.startsWith(title.slice(0, -1)), line);
    }
    const { stdout } = onTerminal(p, ["task", "get", id]);
    assert.ok(stdout.includes(LONG), stdout);
    const json = await p.cli(["task", "get", id, "--json"]);
    assert.equal(json.json.data.task.title, LONG);
  });
});

describe("other text on a terminal", () => {
  const { dir, cleanup } = tempDir("arbeit-terminal-");
  after(cleanup);
  const project = { dir, env: {} };
  const C1_TITLE = "tampered \u009b2J\u009d0;pwned\u009c \u202eexe.txt";

  it("arbeit doctor quoting a title it found changed", { skip: needsScript }, async () => {
    assert.equal((await runCli(["init"], { cwd: dir })).code, 0);
    const created = await runCli(["task", "create", "honest"], { cwd: dir });
    const id = created.json.data.task.id;
    const driver = await openDriver(join(dir, ".arbeit", "arbeit.db"));
    driver.prepare("UPDATE tasks SET title = ? WHERE id = ?").run(C1_TITLE, id);
    driver.close();
    const { code, stdout, stderr } = onTerminal(project, ["doctor"]);
    assert.equal(code, 1, stdout + stderr);
    assert.match(stdout, new RegExp(`task ${id}: title is .*\\\\x9b2J`));
    assertInert(stdout, "stdout");
    assertInert(stderr, "stderr");
  });

  it("arbeit setup naming a folder with escapes in its name", { skip: needsScript }, () => {
    const { code, stdout, stderr } = onTerminal(project, [
      "setup",
      "claude",
      "--dir",
      "evil\u001b]0;pwned\u0007\u009b2J",
    ]);
    assert.equal(code, 0, stdout + stderr);
    assert.match(stdout, /evil\\x1b\]0;pwned\\x07\\x9b2J/);
    assertInert(stdout, "stdout");
    assertInert(stderr, "stderr");
  });
});
