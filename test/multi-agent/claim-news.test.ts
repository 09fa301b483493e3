import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { after, beforeEach, describe, it } from "node:test";
import { hookPayload, runHook } from "../claude/hook-input.js";
import { runCli } from "../helpers/cli.js";
import { dropSchema, postgresSkip, TEST_DATABASE_URL, uniqueSchema } from "../helpers/postgres.js";
import { call, pluginProject, startTask, succeed, systemPrompt } from "../opencode/plugin-driver.js";
import { leaseRanOut, sharedStore } from "./helpers.js";

/**
 * News is true when told: a session hears that it lost its task only while another session
 * holds it, and a session new to a task hears nothing of what happened before it came.
 */

const postgres = { skip: await postgresSkip() };
const LOST = /no longer this session's/;
const RAN_OUT = /claim on tkt-\w+ ran out/;

for (const engine of ["sqlite", "postgres"] as const) {
  describe(`claim news through the Claude Code hooks on ${engine}`, {
    ...(engine === "postgres" ? postgres : {}),
  }, () => {
    const store = sharedStore(engine, "arbeit_claim_news");
    const { dir, env } = store;
    let sessions = 0;
    /** A Claude Code conversation of its own (hooks and `arbeit call` as agent claude-code). */
    const conversation = () => `claude-${engine}-${++sessions}`;

    const arbeit = async (session: string, agent: string, tool: string, args: Record<string, unknown>) => {
      const result = await runCli(["call", tool, JSON.stringify(args), "--session", session, "--agent", agent], {
        cwd: dir,
        env,
      });
      assert.equal(result.json?.success, true, result.stdout + result.stderr);
      return result.json.data;
    };
    const claude = (session: string, tool: string, args: Record<string, unknown>) =>
      arbeit(session, "claude-code", tool, args);
    const codex = (tool: string, args: Record<string, unknown>) => arbeit("codex-1", "codex", tool, args);

    /** What a hook adds to the conversation's context ("" when it has nothing to tell); `agent_id`: a sub-agent's. */
    const told = async (session: string, hook: "user-prompt-submit" | "post-tool-use", agent_id?: string) => {
      const fields = {
        ...(hook === "user-prompt-submit"
          ? { prompt: "Carry on." }
          : { tool_name: "Bash", tool_input: { command: "true" }, tool_response: {}, tool_use_id: "toolu_1" }),
        ...(agent_id === undefined ? {} : { agent_id }),
      };
      const event = hook === "user-prompt-submit" ? "UserPromptSubmit" : "PostToolUse";
      const result = await runHook(hook, hookPayload(dir, session, event, fields), dir, env);
      assert.equal(result.code, 0, result.stderr);
      return (result.json?.hookSpecificOutput?.additionalContext as string | undefined) ?? "";
    };
    const newTask = async (title: string) =>
      (await store.service.createTask({ title }, { session: null, agent: "setup" })).data.task.id;
    /** A task conversation `b` worked on, was told nothing new about, and handed back: codex then claims it. */
    const handedBackThenClaimed = async (b: string, title: string) => {
      const id = await newTask(title);
      await claude(b, "arbeit_task_start_work", { task_id: id });
      assert.equal(await told(b, "user-prompt-submit"), "");
      await claude(b, "arbeit_task_stop_work", { task_id: id });
      await codex("arbeit_task_claim", { task_id: id });
      return id;
    };

    it("does not tell a session it lost a task it holds again, after another session claimed and released it", async () => {
      const b = conversation();
      const id = await handedBackThenClaimed(b, "held again");
      await codex("arbeit_task_claim", { action: "release", task_id: id });
      await claude(b, "arbeit_task_start_work", { task_id: id });

      assert.doesNotMatch(await told(b, "post-tool-use"), LOST);
      assert.doesNotMatch(await told(b, "user-prompt-submit"), LOST);
    });

    it("tells a session it lost its task while another session holds it", async () => {
      const b = conversation();
      const id = await handedBackThenClaimed(b, "taken");

      assert.equal(
        await told(b, "post-tool-use"),
        `Arbeit: news since this session last looked:\n- codex claimed ${id}: it is no longer this session's.`,
      );
      await codex("arbeit_task_claim", { action: "release", task_id: id });
    });

    /** A task conversation `b` works on, was told nothing new about, and whose lease then ran out. */
    const lapsed = async (b: string, title: string) => {
      const id = await newTask(title);
      await claude(b, "arbeit_task_start_work", { task_id: id });
      assert.equal(await told(b, "user-prompt-submit"), "");
      await leaseRanOut(store.service, id);
      return id;
    };

    it("tells a session its claim ran out when another session took the task after its lease ended", async () => {
      const b = conversation();
      const id = await lapsed(b, "lapsed, then taken");
      await codex("arbeit_task_claim", { task_id: id });

      assert.equal(
        await told(b, "post-tool-use"),
        `Arbeit: news since this session last looked:\n- This session's claim on ${id} ran out.\n- codex claimed ${id}: it is no longer this session's.`,
      );
      await codex("arbeit_task_claim", { action: "release", task_id: id });
    });

    it("does not tell a session its claim ran out when it holds the claim again", async () => {
      const b = conversation();
      const id = await lapsed(b, "lapsed, then claimed again");
      // Claiming again sweeps the lapsed lease (a claim_expired event naming this session) first.
      await claude(b, "arbeit_task_claim", { task_id: id });

      assert.doesNotMatch(await told(b, "post-tool-use"), RAN_OUT);
      assert.doesNotMatch(await told(b, "user-prompt-submit"), RAN_OUT);
    });

    it("tells a sub-agent without work of its own the news of the task its parent session works on", async () => {
      const id = await newTask("worked on by a parent");
      const b = conversation();
      await claude(b, "arbeit_task_start_work", { task_id: id });
      const helper = "a0123456789abcdef";
      // Its first step only places its cursor.
      assert.equal(await told(b, "post-tool-use", helper), "");
      await codex("arbeit_context_add", { task_id: id, type: "note", content: "The cache is gone." });

      assert.equal(
        await told(b, "post-tool-use", helper),
        `Arbeit: news since this session last looked:\n- codex added a note to ${id}: The cache is gone.`,
      );
      assert.equal(await told(b, "post-tool-use", helper), "");
    });

    it("tells a session new to a task nothing of what happened on it before", async () => {
      const id = await newTask("with a past");
      await codex("arbeit_task_claim", { task_id: id });
      await codex("arbeit_context_add", { task_id: id, type: "note", content: "Tried the cache first." });
      await codex("arbeit_task_claim", { action: "release", task_id: id });
      const b = conversation();
      await claude(b, "arbeit_task_start_work", { task_id: id });

      assert.equal(await told(b, "post-tool-use"), "");
      assert.equal(await told(b, "user-prompt-submit"), "");
    });
  });

  describe(`claim news through the OpenCode plugin on ${engine}`, {
    ...(engine === "postgres" ? postgres : {}),
  }, () => {
    const schemas: string[] = [];
    const settings = ["ARBEIT_DATABASE_URL", "ARBEIT_DATABASE_SCHEMA"] as const;
    const outer = settings.map((key) => process.env[key]);
    // Registered before the plugin project's own setup, so each test's store is in a schema of its own.
    beforeEach(() => {
      if (engine === "sqlite") {
        for (const key of settings) delete process.env[key];
        return;
      }
      const schema = uniqueSchema("arbeit_plugin_news");
      schemas.push(schema);
      process.env.ARBEIT_DATABASE_URL = TEST_DATABASE_URL;
      process.env.ARBEIT_DATABASE_SCHEMA = schema;
    });
    const project = pluginProject();
    /** The plugin's store is on the engine under test: no SQLite file on Postgres. */
    const assertEngine = () =>
      assert.equal(existsSync(join(project.dir, ".arbeit", "arbeit.db")), engine === "sqlite", "store on the engine");
    after(async () => {
      settings.forEach((key, i) => {
        if (outer[i] === undefined) delete process.env[key];
        else process.env[key] = outer[i];
      });
      for (const schema of schemas) await dropSchema(schema);
    });

    it("does not tell a session it lost a task it holds again, after another session claimed and released it", async () => {
      const { hooks } = project;
      const id = await startTask(hooks, "ses_b");
      await systemPrompt(hooks, "ses_b");
      await succeed(hooks, "arbeit_task_stop_work", { task_id: id }, "ses_b");
      await succeed(hooks, "arbeit_task_claim", { task_id: id }, "ses_c");
      await succeed(hooks, "arbeit_task_claim", { action: "release", task_id: id }, "ses_c");
      await succeed(hooks, "arbeit_task_start_work", { task_id: id }, "ses_b");

      const [, news] = await systemPrompt(hooks, "ses_b");
      assert.equal(news, undefined);
      assertEngine();
    });

    it("tells a session it lost its task while another session holds it", async () => {
      const { hooks } = project;
      const id = await startTask(hooks, "ses_b");
      await systemPrompt(hooks, "ses_b");
      await succeed(hooks, "arbeit_task_stop_work", { task_id: id }, "ses_b");
      await call(hooks, "arbeit_task_claim", { task_id: id }, "ses_c", "plan");

      const [, news] = await systemPrompt(hooks, "ses_b");
      assert.match(news!, new RegExp(`plan claimed ${id}: it is no longer this session's\\.$`));
      assertEngine();
    });

    it("does not tell of a blocker finished when it was reopened before the news was told", async () => {
      const { hooks } = project;
      const blocker = await startTask(hooks, "ses_c", "Blocking work");
      const blocked = await succeed(hooks, "arbeit_task_create", { title: "Blocked", blocked_by: [blocker] }, "ses_b");
      await succeed(hooks, "arbeit_task_start_work", { task_id: blocked.task.id }, "ses_b");
      await systemPrompt(hooks, "ses_b");
      await succeed(hooks, "arbeit_task_update", { task_id: blocker, status: "completed" }, "ses_c");
      await succeed(hooks, "arbeit_task_update", { task_id: blocker, status: "open" }, "ses_c");

      const [, news] = await systemPrompt(hooks, "ses_b");
      assert.equal(news, undefined);
      assertEngine();
    });

    it("briefs a session new to a task without telling it what happened there before as news", async () => {
      const { hooks } = project;
      const created = await succeed(hooks, "arbeit_task_create", { title: "With a past" }, "ses_c");
      const id = created.task.id;
      await succeed(hooks, "arbeit_task_claim", { task_id: id }, "ses_c");
      await succeed(hooks, "arbeit_context_add", { task_id: id, type: "note", content: "Tried the cache" }, "ses_c");
      await succeed(hooks, "arbeit_task_claim", { action: "release", task_id: id }, "ses_c");
      await succeed(hooks, "arbeit_task_start_work", { task_id: id }, "ses_n");

      const [briefing, news] = await systemPrompt(hooks, "ses_n");
      assert.match(briefing!, /Tried the cache/, "the past is in the briefing");
      assert.doesNotMatch(briefing!, /Changed since this session last looked/);
      assert.equal(news, undefined);
      assert.deepEqual(await systemPrompt(hooks, "ses_n"), [briefing]);
      assertEngine();
    });
  });
}
