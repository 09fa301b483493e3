import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { NOTICES_BATCH } from "../../src/notify/notices.js";
import { webhookBody } from "../../src/notify/webhooks.js";
import { letLeaseRunOut } from "../helpers/expiry.js";
import { postgresSkip } from "../helpers/postgres.js";
import { type Dashboard, type Engine, startDashboard, type UiProject, uiProject } from "../ui/harness.js";

/**
 * GET /api/notices, what an open dashboard notifies of besides questions, read from the real
 * `arbeit ui` with agents as CLI processes: claims stale now (the home view's stale claims), and
 * after a seq, the tasks completed and claims swept, each happening under one key.
 */

function noticesSuite(engine: Engine) {
  let project: UiProject;
  let dashboard: Dashboard;
  const call = (tool: string, args: unknown, session = "ses-agent", agent = "claude-code") =>
    project.cli(["call", tool, "-", "--session", session, "--agent", agent], JSON.stringify(args));
  const notices = async (query = "") => {
    const response = await fetch(`${dashboard.origin}/api/notices${query}`, {
      headers: { Authorization: `Bearer ${dashboard.token}` },
    });
    return { status: response.status, body: (await response.json()) as any };
  };

  before(async () => {
    project = await uiProject(engine);
    dashboard = await startDashboard(project.dir, { env: project.env });
  });
  after(async () => {
    await dashboard?.stop();
    await project?.close();
  });

  it("gives the claims stale now, then what happened after a seq, a stale claim and its sweep under one key", async () => {
    const done = (await call("arbeit_task_create", { title: "Write the lexer" })).task.id;
    const held = (await call("arbeit_task_create", { title: "Rename the keys" })).task.id;
    const other = (await call("arbeit_task_create", { title: "Something else" })).task.id;
    const start = (await notices()).body.data;
    assert.deepEqual(start.notices, [], "nothing stale, and nothing before the first ask");
    assert.equal(start.next_lease_end, null);

    const claimed = await call("arbeit_task_claim", { task_id: held }, "ses-sleepy", "sleepy");
    const live = (await notices(`?after=${start.seq}`)).body.data;
    assert.equal(
      live.next_lease_end,
      claimed.task?.lease_expires_at ?? claimed.lease_expires_at,
      "the page is told when to ask again",
    );
    // The lease runs out (its stored end moved into the past rather than waited for).
    const until = await letLeaseRunOut({ cwd: project.dir, env: project.env }, held);
    await call("arbeit_task_update", { task_id: done, status: "completed" });

    const stale = (await notices(`?after=${start.seq}`)).body.data;
    const staleKey = `stale_claim:${held}:${until}`;
    assert.deepEqual(
      stale.notices.map((notice: any) => [notice.kind, notice.key, notice.task_id, notice.agent]),
      [
        ["stale_claim", staleKey, held, "sleepy"],
        ["task_completed", `task_completed:${stale.seq}`, done, "claude-code"],
      ],
    );
    assert.equal(stale.notices[1].title, "Write the lexer");
    assert.equal(stale.more, false);

    // A claim sweeps the stale one: it is no longer stale now, and its claim_expired carries the same key.
    await call("arbeit_task_claim", { task_id: other }, "ses-other", "other");
    const swept = (await notices(`?after=${stale.seq}`)).body.data;
    assert.deepEqual(
      swept.notices.map((notice: any) => [notice.kind, notice.key, notice.session]),
      [["stale_claim", staleKey, "ses-sleepy"]],
    );
  });

  it("pages through a long stretch of events, and refuses an `after` that is not a seq", async () => {
    const task = (await call("arbeit_task_create", { title: "Flip it" })).task.id;
    const from = (await notices()).body.data.seq;
    // More task updates than one answer reads (a batch takes at most 100 operations).
    for (let batch = 0; batch * 70 < NOTICES_BATCH + 10; batch++)
      await call("arbeit_batch", {
        operations: Array.from({ length: 70 }, (_, i) => ({
          tool: "arbeit_task_update",
          args: { task_id: task, description: `take ${batch}.${i}` },
        })),
      });
    await call("arbeit_task_update", { task_id: task, status: "completed" });
    const first = (await notices(`?after=${from}`)).body.data;
    assert.equal(first.more, true);
    assert.deepEqual(first.notices, []);
    const second = (await notices(`?after=${first.seq}`)).body.data;
    assert.equal(second.more, false);
    assert.deepEqual(
      second.notices.map((notice: any) => notice.kind),
      ["task_completed"],
    );

    // An ntfy topic URL keeps its message template as given.
    const ntfy = "https://ntfy.example/my-team?tpl=1&t={{.kind}}&m={{.text}}";
    assert.equal((await project.cli(["notify", "add", ntfy])).webhook.url, ntfy);

    const refused = await notices("?after=yesterday");
    assert.equal(refused.status, 400);
    assert.equal(refused.body.error.code, "INVALID_ARGUMENT");
  });
}

describe("notices for the dashboard, on SQLite", () => noticesSuite("sqlite"));
describe("notices for the dashboard, on Postgres", { skip: await postgresSkip() }, () => noticesSuite("postgres"));

describe("webhook bodies for chat and phones", () => {
  it("carry the line Slack posts and ntfy's templates read (`text`, `kind`) at the top", () => {
    const body = JSON.parse(
      webhookBody(
        {
          seq: 7,
          id: "evt-1",
          event_type: "context_added",
          entity_type: "context_entry",
          entity_id: "ctx-1",
          task_id: "tkt-a7f3b2c1",
          timestamp: "2026-01-01T00:00:00.000Z",
          agent: "claude-code",
          session_id: "ses-1",
          payload: { type: "blocker", content: "Should numbers allow underscores?" },
        } as never,
        "question",
        "Write the lexer",
      ),
    );
    assert.equal(body.kind, "question");
    assert.equal(body.text, 'claude-code asks on "Write the lexer" (tkt-a7f3b2c1): Should numbers allow underscores?');
  });
});
