import assert from "node:assert/strict";
import { beforeEach, describe, it } from "node:test";
import { createArbeitHooks } from "../../src/opencode/plugin.js";
import { SYSTEM_BRIEFING_TOKENS } from "../../src/opencode/system-prompt.js";
import { openProject } from "../../src/service/project.js";
import { tempDir } from "../helpers/temp.js";
import { countTokens } from "../helpers/tokenizer.js";
import { call, event, type Hooks, pluginProject, startTask, succeed, systemPrompt } from "./plugin-driver.js";

/** What the plugin adds to an OpenCode session's system prompts: its briefing, and news between steps. */

const NEWS = /^Arbeit news since this session's last step: /;

describe("the OpenCode plugin's system prompt", () => {
  let hooks: Hooks;
  const project = pluginProject();
  beforeEach(() => {
    ({ hooks } = project);
  });

  /** `human:alice` adds a user_input (a person's word) to the task. */
  const personSays = (id: string, content: string) =>
    call(hooks, "arbeit_context_add", { task_id: id, type: "user_input", content }, "agent:human:alice", "human:alice");
  const child = (id: string, parentID: string) =>
    event(hooks, { type: "session.created", properties: { info: { id, parentID } } });

  describe("briefing", () => {
    it("briefs a session on its active task at its first call, and repeats that text unchanged at every later call", async () => {
      const id = await startTask(hooks);
      await succeed(hooks, "arbeit_context_add", { task_id: id, type: "decision", content: "Use tabs" });
      const [first, ...rest] = await systemPrompt(hooks, "ses_main");
      assert.deepEqual(rest, []);
      assert.match(
        first!,
        new RegExp(`^Arbeit: this session is working on:\nTask ${id} \\[in_progress\\] Plugin task`),
      );
      assert.match(first!, /- decision: Use tabs/);
      await succeed(hooks, "arbeit_context_add", { task_id: id, type: "decision", content: "Two spaces after all" });
      // The session's own change is in its conversation already; the prompt stays as it was.
      assert.deepEqual(await systemPrompt(hooks, "ses_main"), [first]);
    });

    it("briefs the session afresh after OpenCode compacts it", async () => {
      const id = await startTask(hooks);
      const [before] = await systemPrompt(hooks, "ses_main");
      await succeed(hooks, "arbeit_progress_add", { task_id: id, items: ["Write it"] });
      await event(hooks, { type: "session.compacted", properties: { sessionID: "ses_main" } });
      const [after] = await systemPrompt(hooks, "ses_main");
      assert.doesNotMatch(before!, /Write it/);
      assert.match(after!, /\[ \] Write it \(prg-/);
    });

    it("tells a new session what is in progress and ready when it has no task", async () => {
      await succeed(hooks, "arbeit_task_create", { title: "Waiting work" }, "ses_planner");
      const [text] = await systemPrompt(hooks, "ses_new");
      assert.match(text!, /^Arbeit task memory is set up in this project \(arbeit_\* tools\)\./);
      assert.match(text!, /Ready to start:\n- tkt-[a-z0-9]{8} "Waiting work"/);
    });

    it("briefs each sub-agent session on its own, on its parent's task while it has none", async () => {
      const parentTask = await startTask(hooks);
      await child("ses_child", "ses_main");
      await child("ses_worker", "ses_main");
      const workerTask = await startTask(hooks, "ses_worker", "Worker task");
      const [childText] = await systemPrompt(hooks, "ses_child");
      const [workerText] = await systemPrompt(hooks, "ses_worker");
      assert.match(
        childText!,
        new RegExp(`^Arbeit: the session that started this one is working on:\nTask ${parentTask} `),
      );
      assert.match(workerText!, new RegExp(`^Arbeit: this session is working on:\nTask ${workerTask} `));
    });

    it(`keeps the briefing within ${SYSTEM_BRIEFING_TOKENS} tokens (o200k_base), however large the task`, async () => {
      const prose = (n: number) => Array.from({ length: n }, (_, i) => `word${i} of the long text`).join(" ");
      const created = await succeed(hooks, "arbeit_task_create", {
        title: "A very large task ".repeat(20).trim(),
        intent: prose(300),
        description: prose(300),
        plan: prose(300),
      });
      const id = created.task.id;
      await succeed(hooks, "arbeit_task_start_work", { task_id: id });
      for (let i = 0; i < 15; i++)
        await succeed(hooks, "arbeit_context_add", { task_id: id, type: "decision", content: prose(100) });
      await succeed(hooks, "arbeit_progress_add", {
        task_id: id,
        items: Array.from({ length: 30 }, (_, i) => `step ${i}: ${prose(10)}`),
      });
      const [text] = await systemPrompt(hooks, "ses_main");
      const tokens = countTokens(text!);
      assert.ok(tokens <= SYSTEM_BRIEFING_TOKENS, `${tokens} tokens`);
      assert.match(text!, new RegExp(`^Arbeit: this session is working on:\nTask ${id} `));
      assert.match(text!, /\(briefing cut to fit the system prompt; arbeit_task_get has all of it\)$/);
    });

    it("stays out of the prompt of a call without a session", async () => {
      const output = { system: ["You are opencode."] };
      await hooks["experimental.chat.system.transform"]!({ model: {} as never }, output);
      assert.deepEqual(output.system, ["You are opencode."]);
    });
  });

  describe("news", () => {
    it("tells the next call, once, of a note another session added to the session's task", async () => {
      const id = await startTask(hooks);
      const [briefing] = await systemPrompt(hooks, "ses_main");
      await succeed(hooks, "arbeit_context_add", { task_id: id, type: "blocker", content: "CI is red" }, "ses_other");
      const next = await systemPrompt(hooks, "ses_main");
      assert.equal(next.length, 2);
      assert.equal(next[0], briefing);
      assert.match(next[1]!, NEWS);
      assert.match(next[1]!, new RegExp(`build added a blocker to ${id}: CI is red$`));
      assert.deepEqual(await systemPrompt(hooks, "ses_main"), [briefing]);
    });

    it("tells the next call, once, of a person's answer to the session's question, with the question", async () => {
      const id = await startTask(hooks);
      const [briefing] = await systemPrompt(hooks, "ses_main");
      const question = await succeed(hooks, "arbeit_context_add", {
        task_id: id,
        type: "blocker",
        content: "Which DB?",
      });
      const { envelope } = await call(
        hooks,
        "arbeit_context_add",
        { task_id: id, type: "user_input", content: "Use Postgres.", supersede_entry_id: question.entry.id },
        "agent:human:alice",
        "human:alice",
      );
      assert.equal(envelope.success, true, JSON.stringify(envelope));
      assert.deepEqual(await systemPrompt(hooks, "ses_main"), [
        briefing,
        `Arbeit news since this session's last step: human:alice answered the question on ${id} ("Which DB?"): Use Postgres.`,
      ]);
      assert.deepEqual(await systemPrompt(hooks, "ses_main"), [briefing]);
    });

    it("does not tell the answer again after an OpenCode restart on the same session (the told news moved its cursor)", async () => {
      const id = await startTask(hooks);
      await systemPrompt(hooks, "ses_main");
      await personSays(id, "Use Postgres.");
      const [, news] = await systemPrompt(hooks, "ses_main");
      assert.match(news!, /human:alice added a user_input to tkt-\w+: Use Postgres\.$/);
      await hooks.dispose!();
      project.hooks = hooks = await createArbeitHooks({ directory: project.dir }, {}, {});
      const [briefing, ...rest] = await systemPrompt(hooks, "ses_main");
      assert.deepEqual(rest, []);
      assert.doesNotMatch(briefing!, /Changed since this session last looked/);
      assert.deepEqual((await succeed(hooks, "arbeit_resume", {})).answers, []);
    });

    it("never leaves a person's answer out, however much other news came after it", async () => {
      const id = await startTask(hooks);
      await systemPrompt(hooks, "ses_main");
      await personSays(id, "Keep it small.");
      for (let i = 0; i < 6; i++)
        await succeed(hooks, "arbeit_context_add", { task_id: id, type: "note", content: `note ${i}` }, "ses_other");
      const [, news] = await systemPrompt(hooks, "ses_main");
      assert.match(
        news!,
        new RegExp(
          `^Arbeit news since this session's last step: human:alice added a user_input to ${id}: Keep it small\\. `,
        ),
      );
      assert.match(news!, /note 5 \(and 2 earlier\)$/);
    });

    it("tells nothing of the session's own changes, or of other tasks", async () => {
      const id = await startTask(hooks);
      await systemPrompt(hooks, "ses_main");
      await succeed(hooks, "arbeit_context_add", { task_id: id, type: "note", content: "mine" });
      await startTask(hooks, "ses_other", "Another task");
      assert.equal((await systemPrompt(hooks, "ses_main")).length, 1);
    });

    it("tells of a claim broken by another session", async () => {
      const id = await startTask(hooks);
      await systemPrompt(hooks, "ses_main");
      await succeed(hooks, "arbeit_task_claim", { action: "release", task_id: id, force: true }, "ses_other");
      await succeed(hooks, "arbeit_task_claim", { task_id: id }, "ses_other");
      const [, news] = await systemPrompt(hooks, "ses_main");
      assert.match(
        news!,
        new RegExp(
          `build broke this session's claim on ${id}\\. build claimed ${id}: it is no longer this session's\\.$`,
        ),
      );
    });

    it("tells of a blocker of the session's task completed, and whether any is left", async () => {
      const blocker = await startTask(hooks, "ses_other", "Blocking work");
      const created = await succeed(hooks, "arbeit_task_create", { title: "Blocked work", blocked_by: [blocker] });
      await succeed(hooks, "arbeit_task_start_work", { task_id: created.task.id });
      await systemPrompt(hooks, "ses_main");
      await succeed(hooks, "arbeit_task_update", { task_id: blocker, status: "completed" }, "ses_other");
      const [, news] = await systemPrompt(hooks, "ses_main");
      assert.match(news!, new RegExp(`${blocker}, which blocked ${created.task.id}, is completed\\.$`));
    });

    it("tells a host that keeps no state between steps each piece of news once, through the session's cursor", async () => {
      const id = await startTask(hooks);
      const service = await openProject({ cwd: project.dir });
      try {
        const caller = { session: "ses_main", agent: "build" };
        await service.sessionNews(caller);
        await succeed(
          hooks,
          "arbeit_context_add",
          { task_id: id, type: "decision", content: "Ship Friday" },
          "ses_lead",
        );
        const first = (await service.sessionNews(caller)).data;
        assert.deepEqual(
          first.news.map((item) => item.text),
          [`build added a decision to ${id}: Ship Friday`],
        );
        assert.deepEqual((await service.sessionNews(caller)).data, { news: [], seq: first.seq });
      } finally {
        await service.close();
      }
    });

    it("does not repeat what arbeit_resume showed the session", async () => {
      const id = await startTask(hooks);
      await systemPrompt(hooks, "ses_main");
      await succeed(hooks, "arbeit_context_add", { task_id: id, type: "note", content: "seen in resume" }, "ses_other");
      await succeed(hooks, "arbeit_resume", {});
      assert.equal((await systemPrompt(hooks, "ses_main")).length, 1);
    });
  });
});

describe("the OpenCode plugin's system prompt in a project without Arbeit", () => {
  it("adds nothing", async () => {
    const { dir, cleanup } = tempDir();
    const hooks = await createArbeitHooks({ directory: dir }, {}, {});
    try {
      assert.deepEqual(await systemPrompt(hooks, "ses_main"), []);
    } finally {
      await hooks.dispose!();
      cleanup();
    }
  });
});
