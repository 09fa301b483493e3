import assert from "node:assert/strict";
import { after, beforeEach, describe, it } from "node:test";
import { renderText } from "../../src/cli/render-text.js";
import { type CliResult, runCli } from "../helpers/cli.js";
import { dropSchema, postgresSkip, TEST_DATABASE_URL, uniqueSchema } from "../helpers/postgres.js";
import { tempDir } from "../helpers/temp.js";
import { hookPayload, runHook } from "./hook-input.js";

/**
 * A person answers a Claude Code session's question from outside the conversation (the
 * dashboard): the session's blocker entry is the question, the answer a user_input superseding it,
 * added by `human:alice`. The session hears it at its next step, whichever hook that is, and
 * exactly once: PostToolUse (after a tool call), UserPromptSubmit (the next prompt) and
 * arbeit_resume share one cursor. Real CLI processes, hook JSON on stdin as Claude Code sends it.
 */

const PERSON = ["--session", "agent:human:alice", "--agent", "human:alice"];

for (const engine of ["sqlite", "postgres"] as const)
  describe(`a person's answer reaches the Claude Code session working on the task, once (${engine})`, {
    skip: engine === "postgres" ? await postgresSkip() : false,
  }, () => {
    const { dir, cleanup } = tempDir("arbeit-claude-answers-");
    const schema = engine === "postgres" ? uniqueSchema("arbeit_claude_answers") : "";
    const env: Record<string, string> =
      engine === "postgres" ? { ARBEIT_DATABASE_URL: TEST_DATABASE_URL, ARBEIT_DATABASE_SCHEMA: schema } : {};
    let session: string;
    let taskId: string;
    let runs = 0;
    after(async () => {
      cleanup();
      if (engine === "postgres") await dropSchema(schema);
    });

    async function arbeit(who: string[], tool: string, args: object): Promise<any> {
      const result = await runCli([...who, "call", tool, JSON.stringify(args)], { cwd: dir, env });
      assert.equal(result.code, 0, `${tool}: ${result.stdout}${result.stderr}`);
      return result.json.data;
    }
    const asSession = () => ["--session", session, "--agent", "claude-code"];
    const hook = (name: string, event: string, fields: Record<string, unknown>) =>
      runHook(name, hookPayload(dir, session, event, fields), dir, env);
    const afterTool = () =>
      hook("post-tool-use", "PostToolUse", {
        tool_name: "Bash",
        tool_input: { command: "ls" },
        tool_response: { stdout: "src\n", stderr: "", interrupted: false },
        tool_use_id: `toolu_${++runs}`,
      });
    const prompt = () => hook("user-prompt-submit", "UserPromptSubmit", { prompt: "Go on" });

    function told(result: CliResult, event: string): string {
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stderr, "");
      assert.equal(result.json?.hookSpecificOutput?.hookEventName, event, result.stdout);
      return result.json.hookSpecificOutput.additionalContext;
    }
    function silent(result: CliResult): void {
      assert.deepEqual([result.code, result.stdout, result.stderr], [0, "", ""]);
    }

    /** The session asks (a blocker on its task), and the person answers it. */
    async function askAndAnswer(question: string, content: string): Promise<string> {
      const blocker = (
        await arbeit(asSession(), "arbeit_context_add", { task_id: taskId, type: "blocker", content: question })
      ).entry.id;
      await arbeit(PERSON, "arbeit_context_add", {
        task_id: taskId,
        type: "user_input",
        content,
        supersede_entry_id: blocker,
      });
      return blocker;
    }
    const newsOf = (line: string) => `Arbeit: news since this session last looked:\n- ${line}`;

    // Each test is a new conversation on a task of its own: SessionStart, then work on the task.
    beforeEach(async () => {
      if (runs === 0) await arbeit(PERSON, "arbeit_init", {});
      session = `claude-session-${++runs}`;
      taskId = (await arbeit(PERSON, "arbeit_task_create", { title: `Store the sessions (${session})` })).task.id;
      told(await hook("session-start", "SessionStart", { source: "startup" }), "SessionStart");
      await arbeit(asSession(), "arbeit_task_start_work", { task_id: taskId });
    });

    it("post-tool-use tells it after the next tool call; no later tool call or prompt repeats it", async () => {
      await askAndAnswer("Which DB?", "Use Postgres.");
      assert.equal(
        told(await afterTool(), "PostToolUse"),
        newsOf(`human:alice answered the question on ${taskId} ("Which DB?"): Use Postgres.`),
      );
      silent(await afterTool());
      silent(await prompt());
      silent(await afterTool());
    });

    it("user-prompt-submit tells it when the next prompt comes first; tool calls then do not repeat it", async () => {
      await askAndAnswer("Which port?", "5432.");
      assert.equal(
        told(await prompt(), "UserPromptSubmit"),
        newsOf(`human:alice answered the question on ${taskId} ("Which port?"): 5432.`),
      );
      silent(await afterTool());
      silent(await prompt());
    });

    it("arbeit_resume shows it first; the hooks then do not repeat it", async () => {
      const blocker = await askAndAnswer("Which DB?", "Use Postgres.");
      const packet = await arbeit(asSession(), "arbeit_resume", {});
      assert.equal(Object.keys(packet)[0], "answers");
      assert.deepEqual(
        packet.answers.map((a: any) => [a.by, a.question?.entry_id, a.question?.content, a.content]),
        [["human:alice", blocker, "Which DB?", "Use Postgres."]],
      );
      silent(await afterTool());
      silent(await prompt());
    });

    it("arbeit resume's readable text prints it before the briefing; a peek leaves it for the next step", async () => {
      await askAndAnswer("Which DB?", "Use Postgres.");
      const peeked = await runCli([...asSession(), "resume", "--peek"], { cwd: dir, env });
      assert.equal(peeked.code, 0, peeked.stderr);
      assert.match(
        renderText(peeked.json).stdout,
        new RegExp(
          `^Answers since you last looked:\n- human:alice answered the question "Which DB\\?" on ${taskId} \\(ctx-\\w+\\):\n {4}Use Postgres\\.\n\nResume briefing for agent claude-code`,
        ),
      );
      told(await afterTool(), "PostToolUse");
      assert.deepEqual((await arbeit(asSession(), "arbeit_resume", {})).answers, []);
    });

    it("post-tool-use still tracks the file the tool touched, and says nothing without news", async () => {
      const result = await hook("post-tool-use", "PostToolUse", {
        tool_name: "Write",
        tool_input: { file_path: `${dir}/notes.md`, content: "x" },
        tool_response: { success: true },
        tool_use_id: "toolu_write",
      });
      silent(result);
      const { files } = await arbeit(asSession(), "arbeit_task_get", { task_id: taskId, include: ["files"] });
      assert.deepEqual(
        files.map((f: any) => f.file_path),
        ["notes.md"],
      );
    });
  });
