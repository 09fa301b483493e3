import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type CliProject, cliProject } from "./support.js";

/**
 * The reference workflow (docs/cli.md walkthrough) through the real `arbeit` binary: one agent plans an epic, works on a
 * child task in a Monday session, stops at a blocker, and resumes it on Tuesday from the
 * briefing alone. Steps alternate between `arbeit call` (JSON, as scripts and hooks use it) and
 * the friendly subcommands; every id comes from the JSON of an earlier step.
 */
describe("the reference workflow through the CLI", () => {
  let project: CliProject;
  // Monday's session comes from the environment, Tuesday's from --session; the agent is the same.
  const monday = { env: { ARBEIT_SESSION: "monday", ARBEIT_AGENT: "claude" } };
  const sameAgent = { env: { ARBEIT_AGENT: "claude" } };
  const ids: Record<string, string> = {};
  let progressIds: string[] = [];

  before(async () => {
    project = await cliProject({ init: false });
  });
  after(() => project.cleanup());

  it("initialises the project: arbeit init creates .arbeit/arbeit.db", async () => {
    const data = await project.ok(["init"]);
    assert.equal(data.initialized, true);
    assert.equal(data.path, join(project.dir, ".arbeit", "arbeit.db"));
  });

  it("creates the epic with a friendly subcommand; missing epic fields come back as recommendations", async () => {
    const data = await project.ok(
      [
        "task",
        "create",
        "Auth Security Improvements",
        "--type",
        "epic",
        "--intent",
        "Address security audit findings from Q4",
      ],
      monday,
    );
    assert.match(data.task.id, /^tkt-[a-z0-9]{8}$/);
    assert.equal(data.task.title, "Auth Security Improvements");
    assert.equal(data.task.type, "epic");
    assert.equal(data.task.status, "open");
    assert.equal(data.task.intent, "Address security audit findings from Q4");
    assert.ok(data.recommendations.missing_fields.includes("description"));
    ids.epic = data.task.id;
  });

  it("creates the first child with arbeit call and JSON arguments", async () => {
    const args = {
      title: "Implement session timeout",
      intent: "Users complaining sessions never expire",
      parent_id: ids.epic,
    };
    const data = await project.ok(["call", "arbeit_task_create", JSON.stringify(args)], monday);
    assert.equal(data.task.parent_id, ids.epic);
    assert.equal(data.task.intent, "Users complaining sessions never expire");
    ids.timeout = data.task.id;
  });

  it("creates the second child with --parent-id", async () => {
    const data = await project.ok(["task", "create", "Add rate limiting to login", "--parent-id", ids.epic!], monday);
    assert.equal(data.task.parent_id, ids.epic);
    ids.rateLimit = data.task.id;
    const children = await project.ok(["query", "children_of", "--task-id", ids.epic!]);
    assert.deepEqual(
      children.tasks.map((task: { id: string }) => task.id),
      [ids.timeout, ids.rateLimit],
    );
  });

  it("starts work in the Monday session: the task goes in_progress and the session is linked", async () => {
    const data = await project.ok(["task", "start", ids.timeout!], monday);
    assert.equal(data.task.status, "in_progress");
    assert.equal(data.session_linked, true);
    assert.equal(data.session_id, "monday");
  });

  it("records a decision (friendly) and its rationale with metadata (call)", async () => {
    const decision = await project.ok(
      ["context", "add", ids.timeout!, "decision", "Using localStorage for last-activity timestamp"],
      monday,
    );
    assert.match(decision.entry.id, /^ctx-/);
    assert.equal(decision.entry.type, "decision");
    assert.equal(decision.entry.task_id, ids.timeout);
    ids.decision = decision.entry.id;

    const rationale = await project.ok(
      [
        "call",
        "arbeit_context_add",
        JSON.stringify({
          task_id: ids.timeout,
          type: "rationale",
          content: "Simpler than server-side, no backend changes needed",
          metadata: { for: ids.decision },
        }),
      ],
      monday,
    );
    assert.equal(rationale.entry.type, "rationale");
    assert.deepEqual(rationale.entry.metadata, { for: ids.decision });
  });

  it("adds four progress items as words and completes two of them with arbeit call", async () => {
    const steps = ["Create useIdleTimeout hook", "Build SessionWarning component", "Wire up to App.tsx", "Add tests"];
    const added = await project.ok(["progress", "add", ids.timeout!, ...steps], monday);
    assert.deepEqual(
      added.items.map((item: { content: string }) => item.content),
      steps,
    );
    assert.ok(added.items.every((item: { completed: boolean }) => item.completed === false));
    progressIds = added.items.map((item: { id: string }) => item.id);

    const done = await project.ok(
      ["call", "arbeit_progress_complete", JSON.stringify({ item_ids: progressIds.slice(0, 2) })],
      monday,
    );
    assert.deepEqual(
      done.completed.map((item: { id: string; completed: boolean }) => [item.id, item.completed]),
      [
        [progressIds[0], true],
        [progressIds[1], true],
      ],
    );
  });

  it("tracks a file written during the session", async () => {
    mkdirSync(join(project.dir, "src"));
    writeFileSync(join(project.dir, "src", "useIdleTimeout.ts"), "export {};\n");
    const data = await project.ok(["track", "src/useIdleTimeout.ts", "--op", "write"], monday);
    assert.deepEqual(data, {
      tracked: true,
      task_id: ids.timeout,
      file_path: "src/useIdleTimeout.ts",
      operation: "write",
    });
  });

  it("records the blocker and stops work for the day", async () => {
    const blocker = await project.ok(
      ["context", "add", ids.timeout!, "blocker", "Need user input on timeout duration - 30 min vs 60 min"],
      monday,
    );
    ids.blocker = blocker.entry.id;

    const stopped = await project.ok(["task", "stop-work", ids.timeout!], monday);
    assert.deepEqual(stopped, { stopped: true, files_tracked: 1, claim_released: true });
  });

  it("briefs a new session on everything needed to resume", async () => {
    const include = "parent,children,blocked_by,blocking,context_all,progress_summary,files,sessions,recent_events";
    const brief = await project.ok(["task", "get", ids.timeout!, "--include", include, "--session", "tuesday"]);

    assert.equal(brief.task.id, ids.timeout);
    assert.equal(brief.task.status, "in_progress", "stopping work leaves the status alone");
    assert.equal(brief.task.intent, "Users complaining sessions never expire");
    assert.equal(brief.parent.id, ids.epic);
    assert.equal(brief.parent.title, "Auth Security Improvements");
    assert.deepEqual(brief.children, []);
    assert.deepEqual(brief.blocked_by, []);
    assert.deepEqual(brief.blocking, []);

    assert.deepEqual(
      brief.context_all.map((entry: { id: string; type: string; superseded_by: string | null }) => [
        entry.id,
        entry.type,
        entry.superseded_by,
      ]),
      [
        [ids.decision, "decision", null],
        [brief.context_all[1].id, "rationale", null],
        [ids.blocker, "blocker", null],
      ],
    );

    assert.equal(brief.progress_summary.total, 4);
    assert.equal(brief.progress_summary.completed, 2);
    assert.equal(brief.progress_summary.remaining, 2);
    assert.equal(brief.progress_summary.percent, 50);
    assert.deepEqual(
      brief.progress_summary.remaining_items.map((item: { id: string }) => item.id),
      progressIds.slice(2),
    );

    assert.deepEqual(
      brief.files.map((file: { file_path: string; operations: string[] }) => [file.file_path, file.operations]),
      [["src/useIdleTimeout.ts", ["write"]]],
    );
    assert.deepEqual(
      brief.sessions.map((link: { session_id: string; agent: string }) => [link.session_id, link.agent]),
      [["monday", "claude"]],
    );

    const events = brief.recent_events.map((event: { event_type: string }) => event.event_type);
    for (const type of [
      "task_created",
      "work_started",
      "context_added",
      "progress_added",
      "progress_completed",
      "file_tracked",
      "work_stopped",
    ]) {
      assert.ok(events.includes(type), `recent_events lacks ${type}: ${events.join(", ")}`);
    }
  });

  it("starts work again in the Tuesday session with arbeit call", async () => {
    const data = await project.ok(
      ["--session", "tuesday", "call", "arbeit_task_start_work", JSON.stringify({ task_id: ids.timeout })],
      sameAgent,
    );
    assert.equal(data.session_linked, true);
    assert.equal(data.session_id, "tuesday");
    assert.equal(data.task.status, "in_progress");
  });

  it("supersedes the blocker once the user answers", async () => {
    const data = await project.ok(
      [
        "--session",
        "tuesday",
        "context",
        "add",
        ids.timeout!,
        "blocker",
        "User confirmed 30 minute timeout",
        "--supersede-entry-id",
        ids.blocker!,
      ],
      sameAgent,
    );
    assert.equal(data.entry.type, "blocker");
    assert.equal(data.entry.content, "User confirmed 30 minute timeout");
    assert.equal(data.superseded.id, ids.blocker);
    assert.equal(data.superseded.superseded_by, data.entry.id);
    ids.resolution = data.entry.id;
  });

  it("ends with the full history kept and only live context in the default view", async () => {
    const brief = await project.ok(["task", "get", ids.timeout!, "--include", "context,context_all,sessions"]);
    const live = brief.context.map((entry: { id: string }) => entry.id);
    assert.ok(!live.includes(ids.blocker), "the superseded blocker is no longer live context");
    assert.ok(live.includes(ids.resolution));
    assert.ok(live.includes(ids.decision));
    assert.equal(brief.context_all.length, 4);
    assert.equal(
      brief.context_all.find((entry: { id: string }) => entry.id === ids.blocker).superseded_by,
      ids.resolution,
    );
    assert.deepEqual(brief.sessions.map((link: { session_id: string }) => link.session_id).sort(), [
      "monday",
      "tuesday",
    ]);

    const tasks = await project.ok(["query", "tasks", "--parent-id", ids.epic!]);
    assert.deepEqual(
      tasks.tasks.map((task: { id: string; status: string }) => [task.id, task.status]),
      [
        [ids.timeout, "in_progress"],
        [ids.rateLimit, "open"],
      ],
    );
  });
});
