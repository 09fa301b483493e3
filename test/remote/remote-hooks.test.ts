import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { hookPayload, runHook } from "../claude/hook-input.js";
import { ChildTransport } from "../helpers/child-transport.js";
import { ARBEIT_SETTINGS, CLI, runCli } from "../helpers/cli.js";
import { postgresSkip } from "../helpers/postgres.js";
import { makeToken, type Service, startService } from "../serve/harness.js";
import { type Engine, type UiProject, uiProject } from "../ui/harness.js";
import { type Checkout, type CountingProxy, checkout, closedPort, countingProxy } from "./harness.js";

/**
 * Claude Code's hooks in a checkout pointed at `arbeit serve`: the real `arbeit hook <name>`
 * processes, with real payloads on stdin, each sending its store step to the service as exactly
 * one HTTP request (counted by a proxy in front of the service), its effect on the service's store.
 */

const SESSION = "claude-remote-1";

function git(dir: string, ...args: string[]): string {
  return execFileSync("git", args, {
    cwd: dir,
    encoding: "utf8",
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "Test",
      GIT_AUTHOR_EMAIL: "test@example.com",
      GIT_COMMITTER_NAME: "Test",
      GIT_COMMITTER_EMAIL: "test@example.com",
    },
  });
}

for (const engine of ["sqlite", "postgres"] as Engine[]) {
  describe(`Claude Code hooks in a checkout pointed at arbeit serve (${engine} behind it)`, {
    skip: engine === "postgres" ? await postgresSkip() : false,
  }, () => {
    let project: UiProject;
    let service: Service;
    let proxy: CountingProxy;
    let laptop: Checkout;
    let alice: string;
    let taskId: string;
    /** A call made in the service's own project, on its store directly. */
    const direct = async (args: string[]) => {
      const result = await runCli(args, { cwd: project.dir, env: project.env });
      assert.equal(result.code, 0, `${args.join(" ")}: ${result.stdout}${result.stderr}`);
      return result;
    };
    /** The rows of one table of the service's store (through `arbeit export`, for either engine). */
    const rows = async (table: string): Promise<any[]> =>
      (await direct(["export", "-"])).stdout
        .split("\n")
        .filter((line) => line.startsWith(`{"table":"${table}"`))
        .map((line) => JSON.parse(line).row);
    const eventsOf = async (type: string) =>
      (await rows("events"))
        .filter((event) => event.event_type === type)
        .map((event) => ({ ...event, payload: JSON.parse(event.payload) }));
    /** The hook as Claude Code runs it in the laptop's checkout, and the HTTP requests it made. */
    const hook = async (
      name: string,
      event: string,
      fields: Record<string, unknown>,
      env: Record<string, string> = {},
    ) => {
      const before = proxy.requests.length;
      const result = await runHook(name, hookPayload(laptop.dir, SESSION, event, fields), laptop.dir, {
        ...laptop.env,
        ...env,
      });
      assert.equal(result.code, 0, result.stderr);
      return { ...result, requests: proxy.requests.slice(before) };
    };
    const context = (stdout: string) => JSON.parse(stdout).hookSpecificOutput.additionalContext as string;

    before(async () => {
      project = await uiProject(engine);
      alice = await makeToken(project, ["--agent", "alice"]);
      service = await startService(project);
      proxy = await countingProxy(service.url);
      laptop = checkout();
      assert.equal((await laptop.cli(["init", "--server", proxy.url, "--json"])).code, 0);
      assert.equal(
        (await laptop.cli(["login", proxy.url, "--token-stdin", "--json"], { input: `${alice}\n` })).code,
        0,
      );
      mkdirSync(join(laptop.dir, "src"));
      writeFileSync(join(laptop.dir, "src", "app.ts"), "export {};\n");
      taskId = (await laptop.cli(["task", "create", "Fix the login bug", "--json"])).json.data.task.id;
      const started = await laptop.cli(["task", "start-work", taskId, "--session", SESSION, "--json"]);
      assert.equal(started.code, 0, started.stdout);
    });
    after(async () => {
      await proxy?.close();
      await service?.stop("SIGKILL");
      await project?.close();
      laptop?.close();
    });

    it("session-start briefs the session from the service's store, in one request", async () => {
      const result = await hook("session-start", "SessionStart", { source: "startup" });
      assert.deepEqual(result.requests, ["POST /api/hook"]);
      assert.match(context(result.stdout), /this session is working on/);
      assert.match(context(result.stdout), /Fix the login bug/);
      assert.equal(existsSync(join(laptop.dir, ".arbeit", "arbeit.db")), false);
    });

    it("post-tool-use records the file, relative to the laptop's project root, on the service, in one request", async () => {
      const result = await hook("post-tool-use", "PostToolUse", {
        tool_name: "Edit",
        tool_input: { file_path: join(laptop.dir, "src", "app.ts"), old_string: "a", new_string: "b" },
        tool_response: { success: true },
        tool_use_id: "toolu_edit",
      });
      assert.deepEqual(result.requests, ["POST /api/hook"]);
      const files = (await rows("file_associations")).map((row) => [row.task_id, row.file_path, row.session_id]);
      assert.deepEqual(files, [[taskId, "src/app.ts", SESSION]]);
      // A file outside the project never leaves the machine, but the hook still asks for news.
      const outside = await hook("post-tool-use", "PostToolUse", {
        tool_name: "Read",
        tool_input: { file_path: "/etc/hosts" },
        tool_use_id: "toolu_read",
      });
      assert.deepEqual(outside.requests, ["POST /api/hook"]);
      assert.equal((await rows("file_associations")).length, 1);
    });

    it("post-tool-use records a commit read from the laptop's own repository", async () => {
      git(laptop.dir, "init", "-q");
      git(laptop.dir, "add", "src");
      const printed = git(laptop.dir, "commit", "-m", "Fix the cookie");
      const sha = git(laptop.dir, "rev-parse", "HEAD").trim();
      const result = await hook("post-tool-use", "PostToolUse", {
        tool_name: "Bash",
        tool_input: { command: 'git commit -m "Fix the cookie"' },
        tool_response: { stdout: printed, stderr: "", interrupted: false },
        tool_use_id: "toolu_bash",
        duration_ms: 50,
      });
      assert.deepEqual(result.requests, ["POST /api/hook"]);
      const [recorded] = await eventsOf("commit_recorded");
      assert.deepEqual(
        [recorded.task_id, recorded.payload.sha, recorded.payload.subject, recorded.payload.files],
        [taskId, sha, "Fix the cookie", ["src/app.ts"]],
      );
    });

    it("user-prompt-submit logs the prompt and tells news from other sessions, in one request", async () => {
      await direct([
        "call",
        "arbeit_context_add",
        JSON.stringify({ task_id: taskId, type: "note", content: "The cookie lives in auth.ts" }),
      ]);
      const result = await hook("user-prompt-submit", "UserPromptSubmit", { prompt: "Go on with the fix" });
      assert.deepEqual(result.requests, ["POST /api/hook"]);
      assert.match(context(result.stdout), /The cookie lives in auth\.ts/);
      const [logged] = await eventsOf("prompt_submitted");
      assert.deepEqual(
        [logged.session_id, logged.agent, logged.payload.prompt],
        [SESSION, "alice", "Go on with the fix"],
      );
    });

    it("post-tool-use-failure records the failed call as an attempt on the task", async () => {
      const result = await hook("post-tool-use-failure", "PostToolUseFailure", {
        tool_name: "Bash",
        tool_input: { command: "npm test" },
        error: "Exit code 1: 3 tests failed",
      });
      assert.deepEqual(result.requests, ["POST /api/hook"]);
      const entries = (await rows("context_entries")).filter((entry) => entry.type === "attempt");
      assert.equal(entries.length, 1);
      assert.match(entries[0].content, /npm test/);
    });

    it("Claude Code's task list and an approved plan become progress on the service, in one request per hook", async () => {
      const steps = async () =>
        (await rows("progress_items"))
          .filter((item) => item.task_id === taskId)
          .map((item) => `[${item.completed ? "x" : " "}] ${item.content}`);
      const created = await hook("post-tool-use", "PostToolUse", {
        tool_name: "TaskCreate",
        tool_input: { subject: "Reproduce the bug", description: "with a test" },
        tool_response: { task: { id: "1", subject: "Reproduce the bug" } },
        tool_use_id: "toolu_task",
      });
      assert.deepEqual(created.requests, ["POST /api/hook"]);
      const completed = await hook("task-completed", "TaskCompleted", {
        task_id: "1",
        task_subject: "Reproduce the bug",
      });
      assert.deepEqual(completed.requests, ["POST /api/hook"]);
      // The same task again (its TaskCreated hook, say) adds nothing.
      await hook("task-created", "TaskCreated", { task_id: "1", task_subject: "Reproduce the bug" });
      assert.deepEqual(await steps(), ["[x] Reproduce the bug"]);
      const plan = "Fix plan\n\n1. Patch the session check\n";
      const approved = await hook("post-tool-use", "PostToolUse", {
        tool_name: "ExitPlanMode",
        tool_input: { plan },
        tool_response: { plan, isAgent: false, filePath: "/home/you/.claude/plans/fix.md" },
      });
      assert.deepEqual(approved.requests, ["POST /api/hook"]);
      assert.match(context(approved.stdout), new RegExp(`approved plan is recorded on task ${taskId}`));
      assert.deepEqual(await steps(), ["[x] Reproduce the bug", "[ ] Patch the session check"]);
      const decisions = (await rows("context_entries")).filter((entry) => entry.type === "decision");
      assert.deepEqual(
        decisions.map((entry) => [entry.task_id, entry.content]),
        [[taskId, `Plan approved in Claude Code:\n\n${plan}`]],
      );
    });

    it("with a default list (ARBEIT_LIST), a plan approved with no active task becomes a task in that list", async () => {
      const plan = "# Plan: Listed plan\n\n1. Do the listed thing\n";
      const before = proxy.requests.length;
      const payload = hookPayload(laptop.dir, "plan-in-list", "PostToolUse", {
        tool_name: "ExitPlanMode",
        tool_input: { plan },
        tool_response: { plan, isAgent: false, filePath: "/home/you/.claude/plans/listed.md" },
      });
      const result = await runHook("post-tool-use", payload, laptop.dir, { ...laptop.env, ARBEIT_LIST: "team-plans" });
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stderr, "");
      assert.deepEqual(proxy.requests.slice(before), ["POST /api/hook"]);
      const made = (await rows("tasks")).filter((task) => task.title === "Listed plan");
      assert.deepEqual(
        made.map((task) => task.list_id),
        ["team-plans"],
      );
      assert.match(context(result.stdout), new RegExp(`approved plan is recorded on a new task ${made[0].id}`));
    });

    it("a sub-agent's hooks act as <session>/<agent_id>, briefed on its parent's task", async () => {
      const started = await hook("subagent-start", "SubagentStart", { agent_id: "agent-7", agent_type: "Explore" });
      assert.deepEqual(started.requests, ["POST /api/hook"]);
      assert.match(context(started.stdout), /the session that started this one is working on/);
      // Its file touches are its own session's, on the parent's task.
      await hook("post-tool-use", "PostToolUse", {
        agent_id: "agent-7",
        tool_name: "Write",
        tool_input: { file_path: join(laptop.dir, "src", "sub.ts"), content: "" },
        tool_use_id: "toolu_sub",
      });
      const stopped = await hook("subagent-stop", "SubagentStop", { agent_id: "agent-7", agent_type: "Explore" });
      assert.deepEqual(stopped.requests, ["POST /api/hook"]);
      const files = (await rows("file_associations")).map((row) => `${row.file_path} ${row.session_id}`);
      assert.ok(files.includes(`src/sub.ts ${SESSION}/agent-7`), files.join(", "));
      const [event] = await eventsOf("subagent_stopped");
      assert.equal(event.session_id, `${SESSION}/agent-7`);
    });

    it("pre-tool-use asks the service whether a file may be edited, in one request: another session's exclusive reservation denies it", async () => {
      await direct([
        "--session",
        "bob-remote-session",
        "--agent",
        "bob",
        "call",
        "arbeit_task_claim",
        JSON.stringify({ paths: ["src/locked/**"], lease_seconds: 600 }),
      ]);
      const denied = await hook("pre-tool-use", "PreToolUse", {
        tool_name: "Edit",
        tool_input: { file_path: join(laptop.dir, "src", "locked", "a.ts"), old_string: "a", new_string: "b" },
        tool_use_id: "toolu_pre_edit",
      });
      assert.deepEqual(denied.requests, ["POST /api/hook"]);
      const output = JSON.parse(denied.stdout).hookSpecificOutput;
      assert.equal(output.permissionDecision, "deny");
      assert.match(
        output.permissionDecisionReason,
        /src\/locked\/a\.ts is reserved exclusively by bob \(session bob-remote-session\)/,
      );
      const free = await hook("pre-tool-use", "PreToolUse", {
        tool_name: "Bash",
        tool_input: { command: "echo x > src/free.ts" },
        tool_use_id: "toolu_pre_bash",
      });
      assert.deepEqual([free.requests, free.stdout], [["POST /api/hook"], ""]);
      // Before Arbeit's own MCP calls, and Bash that writes nothing, nothing is asked.
      const mcp = await hook("pre-tool-use", "PreToolUse", { tool_name: "mcp__arbeit__arbeit_query", tool_input: {} });
      const read = await hook("pre-tool-use", "PreToolUse", { tool_name: "Bash", tool_input: { command: "ls src" } });
      assert.deepEqual([mcp.requests, read.requests], [[], []]);
      await direct([
        "--session",
        "bob-remote-session",
        "call",
        "arbeit_task_claim",
        JSON.stringify({ action: "release", paths: ["src/locked/**"] }),
      ]);
    });

    it("a sub-agent's MCP call through arbeit mcp records as <session>/<agent_id>, with its parent", async () => {
      // PreToolUse leaves a note on the laptop (no request), which the laptop's arbeit mcp takes.
      const noted = await hook("pre-tool-use", "PreToolUse", {
        agent_id: "agent-9",
        tool_name: "mcp__arbeit__arbeit_track",
        tool_input: {},
        tool_use_id: "toolu_mcp_sub",
      });
      assert.deepEqual(noted.requests, []);
      assert.deepEqual(readdirSync(join(laptop.dir, ".arbeit", "subagent-calls")), ["toolu_mcp_sub"]);
      const env: NodeJS.ProcessEnv = { ...process.env, ...laptop.env, CLAUDE_CODE_SESSION_ID: SESSION };
      for (const key of ARBEIT_SETTINGS) delete env[key];
      const child = spawn(process.execPath, [CLI, "mcp"], { cwd: laptop.dir, env, stdio: ["pipe", "pipe", "pipe"] });
      const client = new Client({ name: "claude-code", version: "1.0.0" });
      try {
        await client.connect(new ChildTransport(child));
        const before = proxy.requests.length;
        // A sub-agent without work of its own records its note on its parent's task.
        const result = (await client.callTool({
          name: "arbeit_context_add",
          arguments: { task_id: taskId, type: "note", content: "Found by the sub-agent" },
          _meta: { "claudecode/toolUseId": "toolu_mcp_sub" },
        })) as { structuredContent?: any };
        assert.equal(result.structuredContent.success, true, JSON.stringify(result));
        assert.deepEqual(proxy.requests.slice(before), ["POST /api/call"]);
        const resumed = (await client.callTool({
          name: "arbeit_resume",
          arguments: {},
          _meta: { "claudecode/toolUseId": "toolu_mcp_sub2" },
        })) as { structuredContent?: any };
        assert.equal(resumed.structuredContent.success, true);
      } finally {
        await client.close();
      }
      const notes = (await eventsOf("context_added")).filter((event) => event.session_id === `${SESSION}/agent-9`);
      assert.equal(notes.length, 1);
    });

    it("pre-compact answers the task's briefing, post-compact records the compaction, in one request each", async () => {
      const pre = await hook("pre-compact", "PreCompact", { trigger: "manual", custom_instructions: "" });
      assert.deepEqual(pre.requests, ["POST /api/hook"]);
      assert.match(pre.stdout, /^Preserve this task briefing in the summary\.\n/);
      assert.match(pre.stdout, /Fix the login bug/);
      const post = await hook("post-compact", "PostCompact", { trigger: "manual", compact_summary: "Summary." });
      assert.deepEqual(post.requests, ["POST /api/hook"]);
      const [compacted] = await eventsOf("session_compacted");
      assert.deepEqual([compacted.payload.trigger, compacted.payload.summary_chars], ["manual", 8]);
      // Everything done with the token names it.
      assert.match(compacted.payload.token_id, /^tok-/);
    });

    it("a read-only token's hooks write nothing: session-start still briefs, the others are silent", async () => {
      const reader = await makeToken(project, ["--agent", "alice", "--read-only"]);
      const before = (await rows("events")).length;
      const env = { ARBEIT_TOKEN: reader };
      const start = await hook("session-start", "SessionStart", { source: "resume" }, env);
      assert.match(context(start.stdout), /Fix the login bug/);
      for (const [name, event, fields] of [
        ["user-prompt-submit", "UserPromptSubmit", { prompt: "Read only" }],
        ["post-tool-use", "PostToolUse", { tool_name: "Read", tool_input: { file_path: join(laptop.dir, "README") } }],
        ["session-end", "SessionEnd", { reason: "other" }],
      ] as const) {
        const result = await hook(name, event, fields, env);
        assert.deepEqual([result.stdout, result.stderr, result.requests], ["", "", ["POST /api/hook"]], name);
      }
      assert.equal((await rows("events")).length, before);
    });

    it("another agent's token cannot act in the session: nothing is written, the hook notes it on stderr", async () => {
      const bob = await makeToken(project, ["--agent", "bob"]);
      const before = (await rows("events")).length;
      const result = await hook(
        "user-prompt-submit",
        "UserPromptSubmit",
        { prompt: "Take over" },
        { ARBEIT_TOKEN: bob },
      );
      assert.equal(result.stdout, "");
      assert.match(result.stderr, /user-prompt-submit hook skipped: .*belongs to another agent/);
      assert.equal((await rows("events")).length, before);
    });

    it("session-end stops the work and hands the claim back, and the request log names each hook", async () => {
      const result = await hook("session-end", "SessionEnd", { reason: "other" });
      assert.deepEqual(result.requests, ["POST /api/hook"]);
      const task = (await direct(["task", "get", taskId, "--json"])).json.data.task;
      assert.equal(task.claim_session, null);
      assert.match(service.stderr(), /alice POST \/api\/hook session-end 200 ok /);
      assert.match(service.stderr(), /alice POST \/api\/hook post-tool-use 200 ok /);
    });

    it("arbeit track sends the path, relative to the laptop's root, in one request", async () => {
      await laptop.cli(["task", "start-work", taskId, "--session", SESSION, "--json"]);
      writeFileSync(join(laptop.dir, "src", "tracked.ts"), "");
      const before = proxy.requests.length;
      const tracked = await laptop.cli(["track", "src/tracked.ts", "--session", SESSION, "--json"]);
      assert.equal(tracked.code, 0, tracked.stdout + tracked.stderr);
      assert.deepEqual(tracked.json.data, {
        tracked: true,
        task_id: taskId,
        file_path: "src/tracked.ts",
        operation: "write",
      });
      assert.deepEqual(proxy.requests.slice(before), ["POST /api/hook"]);
      const outside = await laptop.cli(["track", "/etc/hosts", "--json"]);
      assert.deepEqual(outside.json.data, { tracked: false, reason: "outside_project" });
    });

    it("arbeit track with a read-only token is FORBIDDEN", async () => {
      const reader = await makeToken(project, ["--agent", "carol", "--read-only"]);
      const tracked = await laptop.cli(["track", "src/app.ts", "--json"], { env: { ARBEIT_TOKEN: reader } });
      assert.equal(tracked.code, 1);
      assert.equal(tracked.json.error.code, "FORBIDDEN");
    });
  });
}

describe("Claude Code hooks when the service cannot answer", () => {
  it("an unreachable service: exit 0, nothing on stdout, a note naming the URL on stderr", async () => {
    const laptop = checkout();
    try {
      const url = `http://127.0.0.1:${await closedPort()}`;
      const env = { ...laptop.env, ARBEIT_URL: url, ARBEIT_TOKEN: "arb_anything" };
      for (const [name, event] of [
        ["session-start", "SessionStart"],
        ["post-tool-use", "PostToolUse"],
        ["session-end", "SessionEnd"],
      ]) {
        const result = await runHook(name!, hookPayload(laptop.dir, SESSION, event!, {}), laptop.dir, env);
        assert.equal(result.code, 0);
        assert.equal(result.stdout, "");
        assert.match(
          result.stderr,
          new RegExp(`${name} hook skipped: The Arbeit service at ${url} could not be reached`),
        );
      }
      assert.equal(existsSync(join(laptop.dir, ".arbeit")), false);
    } finally {
      laptop.close();
    }
  });

  it("a token the service refuses: exit 0, nothing on stdout, a note on stderr", async () => {
    const project = await uiProject("sqlite");
    const service = await startService(project);
    const laptop = checkout();
    try {
      const env = { ...laptop.env, ARBEIT_URL: service.url, ARBEIT_TOKEN: "arb_wrong" };
      const payload = hookPayload(laptop.dir, SESSION, "SessionStart", { source: "startup" });
      const result = await runHook("session-start", payload, laptop.dir, env);
      assert.deepEqual([result.code, result.stdout], [0, ""]);
      assert.match(result.stderr, /session-start hook skipped: .*refused the token/);
    } finally {
      laptop.close();
      await service.stop();
      await project.close();
    }
  });

  it("a service that never answers: the hook gives up after its timeout, exit 0, a note on stderr", async () => {
    const held: Array<() => void> = [];
    const hung = createServer((_req, res) => held.push(() => res.destroy()));
    await new Promise<void>((resolve) => hung.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(hung.address() as AddressInfo).port}`;
    const laptop = checkout();
    try {
      const env = { ...laptop.env, ARBEIT_URL: url, ARBEIT_TOKEN: "arb_anything" };
      const payload = hookPayload(laptop.dir, SESSION, "SessionStart", { source: "startup" });
      const result = await runHook("session-start", payload, laptop.dir, env);
      assert.deepEqual([result.code, result.stdout], [0, ""]);
      assert.match(result.stderr, new RegExp(`The Arbeit service at ${url} did not answer within 4 s`));
    } finally {
      laptop.close();
      for (const release of held) release();
      hung.closeAllConnections();
      await new Promise<void>((resolve) => hung.close(() => resolve()));
    }
  });
});
