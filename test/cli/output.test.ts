import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { after, before, describe, it } from "node:test";
import { renderText } from "../../src/cli/render-text.js";
import { CLI } from "../helpers/cli.js";
import { requirement } from "../helpers/requirements.js";
import { type CliProject, cliProject } from "./support.js";

/**
 * JSON when stdout is not a terminal (scripts, hooks, pipes), readable text when it
 * is; --json forces JSON. `arbeit call` prints JSON everywhere: it is the scripting contract.
 */
describe("JSON or text", () => {
  let project: CliProject;
  let taskId: string;
  before(async () => {
    project = await cliProject();
    taskId = (await project.ok(["task", "create", "Output fixture", "--type", "bug"])).task.id;
  });
  after(() => project.cleanup());

  it("prints one line of JSON, the envelope, when stdout is a pipe", async () => {
    const result = await project.run(["task", "get", taskId]);
    assert.equal(result.code, 0);
    assert.equal(result.stdout.trimEnd().split("\n").length, 1);
    assert.deepEqual(Object.keys(result.json), ["success", "data"]);
    assert.equal(result.json.data.task.id, taskId);
  });

  it("puts warnings inside the envelope, not on stderr", async () => {
    const blocker = (await project.ok(["task", "create", "Blocker"])).task.id;
    const blocked = (await project.ok(["task", "create", "Blocked", "--blocked-by", blocker])).task.id;
    const result = await project.run(["task", "start", blocked]);
    assert.equal(result.code, 0);
    assert.equal(result.stderr, "");
    assert.ok(result.json.warnings.some((w: { code: string }) => w.code === "HAS_BLOCKERS"));
  });

  // A real terminal needs a pseudo-terminal; util-linux `script` provides one on Linux.
  const hasScript = spawnSync("script", ["--version"]).status === 0;
  const onTerminal = (args: string[]) => {
    const quoted = [process.execPath, CLI, ...args].map((word) => `'${word.replaceAll("'", "'\\''")}'`).join(" ");
    const env = { ...process.env };
    for (const key of ["ARBEIT_DB", "ARBEIT_SESSION", "ARBEIT_AGENT", "ARBEIT_LIST"]) delete env[key];
    const result = spawnSync("script", ["-q", "-e", "-c", quoted, "/dev/null"], {
      cwd: project.dir,
      env,
      encoding: "utf8",
    });
    return { code: result.status, output: result.stdout.replaceAll("\r\n", "\n") };
  };
  const needsScript = {
    skip: requirement(
      "the terminal output tests",
      hasScript ? undefined : "util-linux `script` is not installed to give the CLI a terminal",
    ),
  };

  it("prints readable text on a terminal", needsScript, () => {
    const { code, output } = onTerminal(["task", "get", taskId]);
    assert.equal(code, 0);
    assert.match(output, new RegExp(`^${taskId}  open\\s+Output fixture  \\(bug, p2\\)`));
    assert.doesNotMatch(output, /"success"/);
  });

  it("--json forces JSON on a terminal", needsScript, () => {
    const { code, output } = onTerminal(["task", "get", taskId, "--json"]);
    assert.equal(code, 0);
    assert.equal(JSON.parse(output).data.task.id, taskId);
  });

  it("arbeit call prints JSON on a terminal too", needsScript, () => {
    const { code, output } = onTerminal(["call", "arbeit_task_get", JSON.stringify({ task_id: taskId })]);
    assert.equal(code, 0);
    assert.equal(JSON.parse(output).success, true);
  });

  it("a tool error on a terminal is text, with the same exit code", needsScript, () => {
    const { code, output } = onTerminal(["task", "get", "tkt-zzzzzzzz"]);
    assert.equal(code, 1);
    assert.match(output, /^error TASK_NOT_FOUND: /);
  });
});

describe("renderText", () => {
  const task = {
    id: "tkt-a7f3b2c1",
    list_id: "default",
    title: "Implement session timeout",
    type: "feature",
    status: "in_progress",
    intent: "Sessions never expire",
    description: null,
    plan: "1. hook\n2. modal",
    parent_id: "tkt-abc00001",
    blocked_by: ["tkt-abc00003"],
    blocks: ["tkt-abc00004", "tkt-abc00005"],
    blocked: true,
    priority: 1,
    owner: "claude",
    active_form: null,
    metadata: { jira: "PAY-3", labels: ["auth", "web"] },
    version: 4,
    created_at: "2026-01-01T00:00:00.000Z",
    updated_at: "2026-01-02T00:00:00.000Z",
  };

  it("renders a task as a headline and the fields an agent resumes from", () => {
    const { stdout, stderr } = renderText({ success: true, data: { task } });
    assert.equal(
      stdout,
      [
        "tkt-a7f3b2c1  in_progress Implement session timeout  (feature, p1, blocked, @claude)",
        "  intent: Sessions never expire",
        "  plan:",
        "    1. hook",
        "    2. modal",
        "  parent: tkt-abc00001",
        "  blocked by: tkt-abc00003",
        "  blocks: tkt-abc00004, tkt-abc00005",
        "  metadata:",
        "    jira: PAY-3",
        "    labels: auth, web",
        "  version 4, updated 2026-01-02T00:00:00.000Z",
        "",
      ].join("\n"),
    );
    assert.equal(stderr, "");
  });

  it("renders a task list one line per task", () => {
    const summary = (id: string, title: string, status: string, priority: number) => ({ id, title, status, priority });
    const { stdout } = renderText({
      success: true,
      data: {
        query: "ready",
        tasks: [summary("tkt-aaaaaaa1", "First", "open", 0), summary("tkt-aaaaaaa2", "Second", "open", 2)],
        has_more: false,
      },
    });
    assert.equal(
      stdout,
      [
        "query: ready",
        "tasks:",
        "  tkt-aaaaaaa1  open        First  (p0)",
        "  tkt-aaaaaaa2  open        Second  (p2)",
        "has_more: false",
        "",
      ].join("\n"),
    );
  });

  it("says (none) for an empty list", () => {
    assert.equal(renderText({ success: true, data: { tasks: [] } }).stdout, "tasks: (none)\n");
  });

  it("renders a briefing's context, progress and events one line each", () => {
    const { stdout } = renderText({
      success: true,
      data: {
        context: [
          {
            id: "ctx-00000001",
            type: "decision",
            content: "Use localStorage",
            superseded_by: "ctx-00000002",
            metadata: null,
          },
        ],
        progress_summary: {
          total: 2,
          completed: 1,
          remaining: 1,
          percent: 50,
          remaining_items: [{ id: "prg-00000002", content: "Add tests" }],
        },
        recent_events: [
          {
            id: "evt-00000001",
            seq: 7,
            timestamp: "2026-01-01T00:00:00.000Z",
            event_type: "context_added",
            entity_id: "ctx-00000001",
            agent: "claude",
            session_id: "s1",
          },
        ],
      },
    });
    assert.equal(
      stdout,
      [
        "context:",
        "  ctx-00000001  decision   Use localStorage  (superseded by ctx-00000002)",
        "progress_summary: 1 of 2 done (50%)",
        "  [ ] prg-00000002  Add tests",
        "recent_events:",
        "  #7  2026-01-01T00:00:00.000Z  context_added  ctx-00000001  (agent claude, session s1)",
        "",
      ].join("\n"),
    );
  });

  it("renders memory entries as key = value with their scope", () => {
    const entry = (key: string, value: unknown, scope: string, scope_id: string, expires_at: string | null) => ({
      id: `mem-0000000${key.length}`,
      scope,
      scope_id,
      key,
      value,
      expires_at,
    });
    const { stdout } = renderText({
      success: true,
      data: {
        entries: [
          entry("test-command", "npm test", "project", "", null),
          entry("limits", { per_ip: 5 }, "task", "tkt-a7f3b2c1", "2026-02-01T00:00:00.000Z"),
        ],
      },
    });
    assert.equal(
      stdout,
      [
        "entries:",
        "  test-command = npm test  (project)",
        '  limits = {"per_ip":5}  (task tkt-a7f3b2c1, expires 2026-02-01T00:00:00.000Z)',
        "",
      ].join("\n"),
    );
  });

  it("renders an error and its suggestions on stderr, nothing on stdout", () => {
    const { stdout, stderr } = renderText({
      success: false,
      error: {
        code: "TASK_NOT_FOUND",
        message: "Task tkt-zzzzzzzz does not exist (or was deleted).",
        suggestions: ["Check the task id."],
      },
    });
    assert.equal(stdout, "");
    assert.equal(
      stderr,
      "error TASK_NOT_FOUND: Task tkt-zzzzzzzz does not exist (or was deleted).\n  hint: Check the task id.\n",
    );
  });

  it("renders warnings on stderr after the data", () => {
    const { stdout, stderr } = renderText({
      success: true,
      data: { stopped: true },
      warnings: [{ code: "HAS_BLOCKERS", message: "Blocked by tkt-abc00003." }],
    });
    assert.equal(stdout, "stopped: true\n");
    assert.equal(stderr, "warning HAS_BLOCKERS: Blocked by tkt-abc00003.\n");
  });
});
