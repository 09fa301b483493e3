import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { renderText } from "../../src/cli/render-text.js";
import { CLI } from "../helpers/cli.js";
import { requirement } from "../helpers/requirements.js";
import { assertUsageError, type CliProject, cliProject } from "./support.js";

/**
 * What a person at a terminal reads: hints name the commands they would type, error messages
 * say in words what was expected, typos get a guess, and every view shows what makes it useful.
 * Scripts and agents keep the JSON envelope as it was, tool names and all.
 */

// A real terminal needs a pseudo-terminal; util-linux `script` provides one on Linux.
const hasScript = spawnSync("script", ["--version"]).status === 0;
const needsScript = {
  skip: requirement(
    "the terminal text tests",
    hasScript ? undefined : "util-linux `script` is not installed to give the CLI a terminal",
  ),
};

/** Runs the CLI with stdout and stderr on one terminal; returns what the terminal showed. */
function onTerminal(cwd: string, args: string[]): { code: number | null; output: string } {
  const quoted = [process.execPath, CLI, ...args].map((word) => `'${word.replaceAll("'", "'\\''")}'`).join(" ");
  const env = { ...process.env };
  for (const key of ["ARBEIT_DB", "ARBEIT_SESSION", "ARBEIT_AGENT", "ARBEIT_LIST"]) delete env[key];
  const result = spawnSync("script", ["-q", "-e", "-c", quoted, "/dev/null"], { cwd, env, encoding: "utf8" });
  return { code: result.status, output: result.stdout.replaceAll("\r\n", "\n") };
}

const hints = (stderr: string) => stderr.split("\n").filter((line) => line.startsWith("  hint: "));

describe("hints name the command a person types", () => {
  const failure = (suggestions: string[]) =>
    renderText({ success: false, error: { code: "INVALID_ARGUMENT", message: "No.", suggestions } }).stderr;

  it("turns a tool call with arguments into a command line: positionals first, then flags", () => {
    assert.deepEqual(
      hints(
        failure([
          'Re-parent with arbeit_task_update {task_id: "tkt-aaaaaaa1", parent_id: "tkt-aaaaaaa2"}.',
          'List tasks with arbeit_query {query: "tasks"}.',
          "Break it: arbeit_task_claim {action: release, task_id, force: true}.",
          'See them with arbeit_task_get {task_id, include: ["context_all", "progress"]}.',
          'Children: arbeit_query {query: "children_of", params: {task_id}}.',
          'Record it with arbeit_context_add {task_id, type: "decision", content: "Use a queue"}.',
        ]),
      ),
      [
        "  hint: Re-parent with `arbeit task update tkt-aaaaaaa1 --parent-id tkt-aaaaaaa2`.",
        "  hint: List tasks with `arbeit query tasks`.",
        "  hint: Break it: `arbeit task claim <task_id> --action release --force`.",
        "  hint: See them with `arbeit task get <task_id> --include context_all,progress`.",
        "  hint: Children: `arbeit query children_of --task-id <task_id>`.",
        '  hint: Record it with `arbeit context add <task_id> decision "Use a queue"`.',
      ],
    );
  });

  it("turns a bare tool name into its command, so the words after it still read", () => {
    assert.deepEqual(
      hints(
        failure([
          "Fill intent, plan with arbeit_task_update (you can set them and the status in one call).",
          "Pick another task (arbeit_query ready).",
          "Call arbeit_init first (CLI: `arbeit init`) in the project root.",
        ]),
      ),
      [
        "  hint: Fill intent, plan with arbeit task update (you can set them and the status in one call).",
        "  hint: Pick another task (arbeit query ready).",
        "  hint: Call arbeit init first in the project root.",
      ],
    );
  });

  it("translates warnings too, and leaves names that are not tools alone", () => {
    const { stderr } = renderText({
      success: true,
      data: {},
      warnings: [
        {
          code: "ORPHAN_RELATIONSHIPS",
          message: "Remove it with arbeit_relationship {action: remove}; see mcp__arbeit__x.",
        },
      ],
    });
    assert.equal(
      stderr,
      "warning ORPHAN_RELATIONSHIPS: Remove it with `arbeit relationship remove`; see mcp__arbeit__x.\n",
    );
  });

  describe("from a real error", () => {
    let project: CliProject;
    let task: string;
    before(async () => {
      project = await cliProject();
      task = (await project.ok(["task", "create", "Typed", "--type", "bug"])).task.id;
    });
    after(() => project.cleanup());

    it("the JSON envelope keeps the tool names agents call", async () => {
      const result = await project.run(["task", "update", task, "--status", "completed"]);
      assert.match(result.json.error.suggestions.join(" "), /arbeit_task_update/);
    });

    it("a terminal shows the command", needsScript, () => {
      const { output } = onTerminal(project.dir, ["task", "update", task, "--status", "completed"]);
      assert.match(output, /hint: .*arbeit task update/);
      assert.doesNotMatch(output, /arbeit_/);
    });
  });
});

describe("error messages say what is expected, in words", () => {
  let project: CliProject;
  before(async () => {
    project = await cliProject();
  });
  after(() => project.cleanup());

  const error = async (args: string[]) => (await project.run(args)).json.error;

  it("a malformed progress id names the progress prefix, with an example and no pattern", async () => {
    const { code, message, suggestions } = await error(["progress", "complete", "prg-1"]);
    assert.equal(code, "INVALID_ID");
    assert.match(message, /item_ids\.0: must look like prg-a7f3b2c1/);
    assert.doesNotMatch(message, /[\^$[\]{}]/);
    assert.match(suggestions.join(" "), /prg-/);
    assert.doesNotMatch(suggestions.join(" "), /tkt-/);
  });

  it("a malformed context entry id names the context prefix", async () => {
    const tkt = (await project.ok(["task", "create", "Ids"])).task.id;
    const { message, suggestions } = await error(["context", "add", tkt, "note", "x", "--supersede-entry-id", "c-1"]);
    assert.match(message, /supersede_entry_id: must look like ctx-a7f3b2c1/);
    assert.match(suggestions.join(" "), /ctx-/);
    assert.doesNotMatch(suggestions.join(" "), /tkt-/);
  });

  it("a malformed task id still reads as before", async () => {
    const { message, suggestions } = await error(["task", "get", "login-bug"]);
    assert.match(message, /task_id: must look like tkt-a7f3b2c1/);
    assert.match(suggestions.join(" "), /tkt-a7f3b2c1/);
  });

  it("a bad duration says what a duration looks like instead of 'Invalid input'", async () => {
    const { message } = await error(["query", "recent_activity", "--since", "5x"]);
    assert.doesNotMatch(message, /Invalid input/);
    assert.match(message, /since: must be a duration like 30m, 24h or 7d/);
  });

  it("a number out of range says the range in words", async () => {
    const { message } = await error(["query", "events", "--after-seq", "-1"]);
    assert.match(message, /after_seq: must be at least 0/);
    assert.doesNotMatch(message, />=/);
  });
});

describe("typos in global options get a guess", () => {
  let project: CliProject;
  before(async () => {
    project = await cliProject();
  });
  after(() => project.cleanup());

  it("before the command", async () => {
    assertUsageError(await project.run(["--jsn", "query", "ready"]), /Did you mean --json\?/);
    assertUsageError(await project.run(["--bd", "x.db", "query", "ready"]), /Did you mean --db\?/);
  });

  it("after a tool command, among its own flags", async () => {
    assertUsageError(await project.run(["query", "ready", "--jsn"]), /Did you mean --json\?/);
    assertUsageError(await project.run(["task", "create", "x", "--sesion", "s"]), /Did you mean --session\?/);
    // A command's own flag still wins when it is the nearer one.
    assertUsageError(await project.run(["query", "ready", "--limt", "2"]), /Did you mean --limit\?/);
  });

  it("after a maintenance command", async () => {
    assertUsageError(await project.run(["doctor", "--jsn"]), /Did you mean --json\?/);
    assertUsageError(await project.run(["export", "--bd", "x.db"]), /Did you mean --db\?/);
  });

  it("after arbeit call", async () => {
    assertUsageError(
      await project.run(["call", "arbeit_query", '{"query":"ready"}', "--jsn"]),
      /Did you mean --json\?/,
    );
  });
});

describe("bottlenecks show what they hold up", () => {
  it("each task line says how many tasks it blocks, directly and in all", () => {
    const row = (id: string, title: string, total: number, direct: number) => ({
      id,
      title,
      status: "open",
      priority: 2,
      blocks_total: total,
      blocks_directly: direct,
    });
    const { stdout } = renderText({
      success: true,
      data: { query: "bottlenecks", tasks: [row("tkt-aaaaaaa1", "Schema", 5, 2), row("tkt-aaaaaaa2", "API", 1, 1)] },
    });
    assert.equal(
      stdout,
      [
        "query: bottlenecks",
        "tasks:",
        "  tkt-aaaaaaa1  open        Schema  (p2, blocks 2 directly, 5 in all)",
        "  tkt-aaaaaaa2  open        API  (p2, blocks 1 directly, 1 in all)",
        "",
      ].join("\n"),
    );
  });
});

describe("resume reads as a briefing", () => {
  let project: CliProject;
  before(async () => {
    project = await cliProject();
    const task = (await project.ok(["task", "create", "Resume me", "--intent", "Because"])).task.id;
    await project.ok(["task", "start", task]);
    await project.ok(["context", "add", task, "decision", "Use a queue"]);
    await project.ok(["progress", "add", task, "Write it", "Test it"]);
    await project.ok(["memory", "set", "test-command", "npm test"]);
  });
  after(() => project.cleanup());

  it("shows no field names from the JSON", needsScript, () => {
    const { code, output } = onTerminal(project.dir, ["resume", "--peek"]);
    assert.equal(code, 0);
    for (const key of [
      "context_history",
      "by_other_agents",
      "after_seq",
      "estimated_tokens",
      "max_tokens",
      "kept_focus",
      "advanced",
    ])
      assert.doesNotMatch(output, new RegExp(key), `${key} in:\n${output}`);
    assert.match(output, /Resume me/);
    assert.match(output, /Because/);
    assert.match(output, /Use a queue/);
    assert.match(output, /\[ \] prg-\w+ {2}Write it/);
    assert.match(output, /test-command = npm test/);
  });

  it("says so when there is nothing to resume", () => {
    const { stdout } = renderText({
      success: true,
      data: {
        agent: "cli",
        focus: { task: null, reason: "none" },
        events: { after_seq: 3, total: 0, by_other_agents: 0, shown: [] },
        cursor: { previous: 3, current: 3, advanced: false },
        budget: { max_tokens: 1500, estimated_tokens: 80, cut: [] },
      },
    });
    assert.match(stdout, /No task to resume/);
    assert.match(stdout, /Since event #3: 0 events/);
  });

  it("keeps the JSON as it was", async () => {
    const data = await project.ok(["resume", "--peek"]);
    assert.ok("context_history" in data && "budget" in data && "cursor" in data);
  });
});

describe("doctor shows progress on a terminal", () => {
  let project: CliProject;
  before(async () => {
    project = await cliProject();
    await project.ok(["task", "create", "Checked"]);
  });
  after(() => project.cleanup());

  it("draws a bar on stderr and clears it before the report", needsScript, () => {
    const { code, output } = onTerminal(project.dir, ["doctor"]);
    assert.equal(code, 0);
    assert.match(output, /doctor \[[#-]+\]/);
    assert.ok(output.includes("\r\x1b[2K"), "the bar is cleared");
    assert.match(output, /No problems found\./);
  });

  it("draws nothing when stderr is not a terminal", async () => {
    const result = await project.run(["doctor"]);
    assert.equal(result.code, 0);
    assert.equal(result.stderr, "");
  });
});

describe("init says what to commit", () => {
  let project: CliProject;
  before(async () => {
    project = await cliProject({ init: false });
  });
  after(() => project.cleanup());

  it("keeps the database out of git and says how to share tasks instead", needsScript, () => {
    execFileSync("git", ["init", "-q"], { cwd: project.dir });
    const { code, output } = onTerminal(project.dir, ["init"]);
    assert.equal(code, 0);
    assert.match(output, /not .*commit/i);
    assert.match(output, /arbeit export/);
    assert.match(readFileSync(join(project.dir, ".arbeit", ".gitignore"), "utf8"), /^\*$/m);
    const status = execFileSync("git", ["status", "--porcelain", "--untracked-files=all"], {
      cwd: project.dir,
      encoding: "utf8",
    });
    assert.equal(status, "");
  });

  it("says the same of a --db file, which gets no .gitignore, and of Postgres, where nothing is local", () => {
    const init = (path: string) => renderText({ success: true, data: { initialized: true, path, root: "/p" } }).stdout;
    const file = init("/elsewhere/tasks.db");
    assert.match(file, /Do not commit the database/);
    assert.doesNotMatch(file, /gitignore/);
    const shared = init("postgres://arbeit@db.internal:5432/work (schema arbeit)");
    assert.match(shared, /shared Postgres store/);
    assert.doesNotMatch(shared, /Do not commit/);
  });

  it("keeps the init JSON as it was", async () => {
    const other = await cliProject({ init: false });
    try {
      const data = await other.ok(["init"]);
      assert.deepEqual(Object.keys(data), ["initialized", "path", "root"]);
    } finally {
      other.cleanup();
    }
  });
});
