import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { tempDir } from "../helpers/temp.js";
import { connectMcp, type McpTestClient } from "./mcp-client.js";

describe("arbeit mcp: the reference workflow", () => {
  it("runs init, plan, work, context, progress, blocker, stop, briefing, resume and supersede", async () => {
    const dir = tempDir();
    const first = await connectMcp(dir.dir, { clientName: "claude-code" });
    let second: McpTestClient | undefined;
    try {
      const early = await first.call("arbeit_task_create", { title: "Too early" });
      assert.equal(early.isError, true);
      assert.equal(early.envelope.error.code, "NOT_INITIALIZED");

      await first.ok("arbeit_init");
      const epic = (
        await first.ok("arbeit_task_create", {
          title: "Auth Security Improvements",
          intent: "Address security audit findings from Q4",
        })
      ).task;
      const timeout = (
        await first.ok("arbeit_task_create", {
          title: "Implement session timeout",
          intent: "Users complaining sessions never expire",
          parent_id: epic.id,
        })
      ).task;
      const rateLimit = (
        await first.ok("arbeit_task_create", { title: "Add rate limiting to login", parent_id: epic.id })
      ).task;
      assert.equal(timeout.parent_id, epic.id);
      assert.equal(rateLimit.parent_id, epic.id);

      const started = await first.ok("arbeit_task_start_work", { task_id: timeout.id });
      assert.equal(started.task.status, "in_progress");
      const firstSession = started.session_id as string;
      assert.match(firstSession, /^mcp-[a-z0-9]{8}$/);

      await first.ok("arbeit_context_add", {
        task_id: timeout.id,
        type: "decision",
        content: "Using localStorage for last-activity timestamp",
      });
      await first.ok("arbeit_context_add", {
        task_id: timeout.id,
        type: "rationale",
        content: "Simpler than server-side, no backend changes needed",
      });
      const items = (
        await first.ok("arbeit_progress_add", {
          task_id: timeout.id,
          items: ["Create useIdleTimeout hook", "Build SessionWarning component", "Wire up to App.tsx", "Add tests"],
        })
      ).items as { id: string }[];
      assert.equal(items.length, 4);
      await first.ok("arbeit_progress_complete", { item_ids: [items[0]!.id, items[1]!.id] });
      const blocker = (
        await first.ok("arbeit_context_add", {
          task_id: timeout.id,
          type: "blocker",
          content: "Need user input on timeout duration - 30 min vs 60 min",
        })
      ).entry;
      const stopped = await first.ok("arbeit_task_stop_work", { task_id: timeout.id });
      assert.equal(stopped.stopped, true);
      await first.close();

      // ... later, in a new session: a new connection is a new session.
      second = await connectMcp(dir.dir, { clientName: "claude-code" });
      const briefing = await second.ok("arbeit_task_get", {
        task_id: timeout.id,
        include: [
          "parent",
          "children",
          "blocked_by",
          "blocking",
          "context_all",
          "progress_summary",
          "files",
          "sessions",
          "recent_events",
        ],
      });
      assert.equal(briefing.task.status, "in_progress");
      assert.equal(briefing.parent.id, epic.id);
      assert.deepEqual(
        briefing.context_all.map((entry: any) => entry.type),
        ["decision", "rationale", "blocker"],
      );
      assert.equal(briefing.progress_summary.completed, 2);
      assert.equal(briefing.progress_summary.total, 4);
      assert.deepEqual(
        briefing.sessions.map((link: any) => [link.session_id, link.agent]),
        [[firstSession, "claude-code"]],
      );
      assert.ok(briefing.recent_events.length > 0);
      assert.ok(briefing.recent_events.every((event: any) => event.agent === "claude-code"));

      const resumed = await second.ok("arbeit_task_start_work", { task_id: timeout.id });
      assert.notEqual(resumed.session_id, firstSession);
      assert.match(resumed.session_id, /^mcp-[a-z0-9]{8}$/);

      const resolved = await second.ok("arbeit_context_add", {
        task_id: timeout.id,
        type: "blocker",
        content: "User confirmed 30 minute timeout",
        supersede_entry_id: blocker.id,
      });
      assert.equal(resolved.superseded.superseded_by, resolved.entry.id);

      const after = await second.ok("arbeit_task_get", { task_id: timeout.id, include: ["context", "sessions"] });
      assert.deepEqual(
        after.context.map((entry: any) => entry.content),
        [
          "Using localStorage for last-activity timestamp",
          "Simpler than server-side, no backend changes needed",
          "User confirmed 30 minute timeout",
        ],
      );
      assert.deepEqual(
        after.sessions.map((link: any) => link.session_id).sort(),
        [firstSession, resumed.session_id].sort(),
      );
    } finally {
      await first.close();
      await second?.close();
      dir.cleanup();
    }
  });
});

describe("arbeit mcp: caller identity", () => {
  it("takes ARBEIT_SESSION and ARBEIT_AGENT over the connection's own", async () => {
    const dir = tempDir();
    const mcp = await connectMcp(dir.dir, { env: { ARBEIT_SESSION: "ses-fixed", ARBEIT_AGENT: "reviewer" } });
    try {
      await mcp.ok("arbeit_init");
      const task = (await mcp.ok("arbeit_task_create", { title: "Review" })).task;
      const started = await mcp.ok("arbeit_task_start_work", { task_id: task.id });
      assert.equal(started.session_id, "ses-fixed");
      const got = await mcp.ok("arbeit_task_get", { task_id: task.id, include: ["sessions"] });
      assert.deepEqual(
        got.sessions.map((link: any) => [link.session_id, link.agent]),
        [["ses-fixed", "reviewer"]],
      );
    } finally {
      await mcp.close();
      dir.cleanup();
    }
  });

  it("uses --db and ARBEIT_LIST", async () => {
    const dir = tempDir();
    const mcp = await connectMcp(dir.dir, { args: ["--db", "tasks.db"], env: { ARBEIT_LIST: "team-a" } });
    try {
      const init = await mcp.ok("arbeit_init");
      assert.equal(init.path, `${dir.dir}/tasks.db`);
      const task = (await mcp.ok("arbeit_task_create", { title: "Scoped" })).task;
      assert.equal(task.list_id, "team-a");
    } finally {
      await mcp.close();
      dir.cleanup();
    }
  });
});
