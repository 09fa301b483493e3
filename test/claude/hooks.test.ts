import assert from "node:assert/strict";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { committedSha } from "../../src/claude/git-commit.js";
import { touchFromPostToolUse } from "../../src/claude/hook-payload.js";
import { HOOK_NAMES } from "../../src/claude/hooks.js";
import { openProject } from "../../src/service/project.js";
import { type CliResult, runCli } from "../helpers/cli.js";
import { letMemoryExpire } from "../helpers/expiry.js";
import { tempDir } from "../helpers/temp.js";
import { trackedFiles } from "../opencode/tracked-files.js";
import { hookPayload, runHook } from "./hook-input.js";

/** `arbeit hook ...` fed real-shaped Claude Code hook JSON (docs/claude-code.md) through the built CLI. */

const SESSION = "9f2c1e3a-claude-session";

const payload = (dir: string, event: string, fields: Record<string, unknown> = {}, session = SESSION) =>
  hookPayload(dir, session, event, fields);

const postToolUse = (dir: string, tool: string, input: Record<string, unknown>, session = SESSION) =>
  payload(
    dir,
    "PostToolUse",
    { tool_name: tool, tool_input: input, tool_response: { success: true }, tool_use_id: "toolu_01" },
    session,
  );

const hook = runHook;

function additionalContext(result: CliResult): string {
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.json.hookSpecificOutput.hookEventName, "SessionStart");
  return result.json.hookSpecificOutput.additionalContext;
}

async function arbeit(dir: string, args: string[], session = SESSION): Promise<any> {
  const result = await runCli(["--session", session, "--agent", "claude-code", ...args], { cwd: dir });
  assert.equal(result.code, 0, `${args.join(" ")}: ${result.stdout}${result.stderr}`);
  return result.json.data;
}

describe("Claude Code hooks", () => {
  let dir: string;
  let cleanup: () => void;
  let taskId: string;
  let otherId: string;

  before(async () => {
    ({ dir, cleanup } = tempDir("arbeit-claude-"));
    mkdirSync(join(dir, "src"));
    mkdirSync(join(dir, "nb"));
    writeFileSync(join(dir, "src", "app.ts"), "export {};\n");
    symlinkSync(join(dir, "src", "app.ts"), join(dir, "link.ts"));
    await arbeit(dir, ["init"]);
    taskId = (await arbeit(dir, ["call", "arbeit_task_create", JSON.stringify({ title: "Fix the login bug" })])).task
      .id;
    otherId = (await arbeit(dir, ["call", "arbeit_task_create", JSON.stringify({ title: "Write docs", priority: 1 })]))
      .task.id;
    await arbeit(dir, ["call", "arbeit_task_start_work", JSON.stringify({ task_id: taskId })]);
    await arbeit(dir, [
      "call",
      "arbeit_context_add",
      JSON.stringify({ task_id: taskId, type: "decision", content: "Keep the session cookie" }),
    ]);
  });

  after(() => cleanup());

  const files = () => trackedFiles(dir, taskId);

  it("post-tool-use records Read/Write/Edit/MultiEdit/NotebookEdit files against the active task", async () => {
    const calls: Array<[string, Record<string, unknown>]> = [
      ["Read", { file_path: join(dir, "src", "app.ts") }],
      ["Write", { file_path: join(dir, "src", "new.ts"), content: "x" }],
      ["Edit", { file_path: join(dir, "src", "app.ts"), old_string: "a", new_string: "b" }],
      ["MultiEdit", { file_path: join(dir, "src", "multi.ts"), edits: [] }],
      ["NotebookEdit", { notebook_path: join(dir, "nb", "a.ipynb"), new_source: "" }],
      ["Bash", { command: "cat src/app.ts" }],
      ["Read", { file_path: "/etc/hosts" }],
      ["Read", { file_path: join(dir, "link.ts") }],
      ["mcp__arbeit__arbeit_task_get", { task_id: taskId }],
    ];
    for (const [tool, input] of calls) {
      const result = await hook("post-tool-use", postToolUse(dir, tool, input), dir);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, "");
      assert.equal(result.stderr, "");
    }
    assert.deepEqual(await files(), [
      `nb/a.ipynb write ${SESSION}`,
      `src/app.ts read ${SESSION}`,
      `src/app.ts write ${SESSION}`,
      `src/multi.ts write ${SESSION}`,
      `src/new.ts write ${SESSION}`,
    ]);
  });

  it("post-tool-use records a sub-agent's file as its own session, on its parent's task", async () => {
    const input = postToolUse(dir, "Write", { file_path: join(dir, "src", "sub.ts"), content: "x" });
    const result = await hook(
      "post-tool-use",
      JSON.stringify({ ...JSON.parse(input), agent_id: "a0123456789abcdef", agent_type: "general-purpose" }),
      dir,
    );
    assert.equal(result.code, 0, result.stderr);
    assert.ok((await files()).includes(`src/sub.ts write ${SESSION}/a0123456789abcdef`));
  });

  it("a sub-agent of a conversation with a 128-character session gets a session of at most 128, its own", async () => {
    const long = `c${"0123456789abcdef".repeat(8)}`.slice(0, 128);
    const id = (await arbeit(dir, ["call", "arbeit_task_create", JSON.stringify({ title: "Split the parser" })], long))
      .task.id;
    await arbeit(dir, ["call", "arbeit_task_start_work", JSON.stringify({ task_id: id })], long);
    const sessions: string[] = [];
    for (const agent of ["a".repeat(64), `${"a".repeat(63)}b`]) {
      const input = postToolUse(
        dir,
        "Write",
        { file_path: join(dir, "src", `${agent.at(-1)}.ts`), content: "x" },
        long,
      );
      const result = await hook(
        "post-tool-use",
        JSON.stringify({ ...JSON.parse(input), agent_id: agent, agent_type: "general-purpose" }),
        dir,
      );
      assert.equal(result.code, 0, result.stderr);
      const rows = (await trackedFiles(dir, id)).filter((row) => row.startsWith(`src/${agent.at(-1)}.ts write `));
      assert.equal(rows.length, 1, `the sub-agent's write is recorded on its parent's task: ${rows}`);
      sessions.push(String(rows[0]?.split(" ")[2]));
    }
    for (const session of sessions) {
      assert.equal(session.length, 128);
      assert.ok(session.startsWith(`${long.slice(0, 100)}`), session);
    }
    assert.notEqual(sessions[0], sessions[1], "two sub-agents stay two sessions");
    await arbeit(dir, ["call", "arbeit_task_update", JSON.stringify({ task_id: id, status: "completed" })], long);
  });

  it("post-tool-use records nothing for a session without active work", async () => {
    const before = await files();
    await hook("post-tool-use", postToolUse(dir, "Read", { file_path: join(dir, "src", "x.ts") }, "other"), dir);
    assert.deepEqual(await files(), before);
  });

  it("finds the project from CLAUDE_PROJECT_DIR, whatever the working directory", async () => {
    const { dir: elsewhere, cleanup: done } = tempDir();
    const input = JSON.stringify({
      session_id: SESSION,
      cwd: elsewhere,
      hook_event_name: "PostToolUse",
      tool_name: "Write",
      tool_input: { file_path: join(dir, "src", "via-env.ts") },
    });
    const result = await hook("post-tool-use", input, elsewhere, { CLAUDE_PROJECT_DIR: dir });
    assert.equal(result.code, 0, result.stderr);
    assert.ok((await files()).includes(`src/via-env.ts write ${SESSION}`));
    done();
  });

  it("session-start briefs the session on its active task", async () => {
    const text = additionalContext(
      await hook("session-start", payload(dir, "SessionStart", { source: "resume" }), dir),
    );
    assert.match(
      text,
      new RegExp(`^Arbeit: this session is working on:\nTask ${taskId} \\[in_progress\\] Fix the login bug`),
    );
    assert.match(text, /- decision: Keep the session cookie/);
    assert.match(text, /src\/app\.ts \(read, write\)/);
  });

  it("pre-compact prints the active task's briefing as plain text", async () => {
    const result = await hook(
      "pre-compact",
      payload(dir, "PreCompact", { trigger: "auto", custom_instructions: "" }),
      dir,
    );
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.json, undefined);
    assert.match(result.stdout, new RegExp(`this session is working on:\nTask ${taskId}`));
    assert.match(result.stdout, /Keep the session cookie/);
    const none = await hook("pre-compact", payload(dir, "PreCompact", { trigger: "manual" }, "other"), dir);
    assert.equal(none.code, 0);
    assert.equal(none.stdout, "");
  });

  it("pre-compact also deletes expired memory for good, whether or not the session has work", async () => {
    const stored = async () => {
      const service = await openProject({ cwd: dir });
      try {
        const all = [{ scope: "project" as const, scope_id: "" }];
        return (await service.store.read((tx) => tx.memoryList({ scopes: all, now: "", limit: 100 }))).map(
          (e) => e.key,
        );
      } finally {
        await service.close();
      }
    };
    const set = (key: string, extra: Record<string, unknown>) =>
      arbeit(dir, ["call", "arbeit_memory", JSON.stringify({ action: "set", key, value: 1, ...extra })]);
    await set("short-lived", { ttl_seconds: 60 });
    await set("lasting", {});
    await letMemoryExpire({ cwd: dir }, "short-lived");
    assert.deepEqual((await stored()).sort(), ["lasting", "short-lived"]);
    const result = await hook("pre-compact", payload(dir, "PreCompact", { trigger: "auto" }, "other"), dir);
    assert.deepEqual([result.code, result.stdout, result.stderr], [0, "", ""]);
    assert.deepEqual(await stored(), ["lasting"]);
  });

  it("session-start for a new session names the holder of work in progress and offers only the ready work", async () => {
    const text = additionalContext(
      await hook("session-start", payload(dir, "SessionStart", { source: "clear" }, "new-session"), dir),
    );
    assert.doesNotMatch(text, /resume with arbeit_task_start_work/);
    assert.match(
      text,
      new RegExp(
        `In progress, held by others \\(not yours to resume\\):\\n- ${taskId} "Fix the login bug" \\(priority 2\\), held by claude-code in another session until \\S+Z`,
      ),
    );
    assert.match(text, new RegExp(`Ready to start:\\n- ${otherId} "Write docs" \\(priority 1\\)`));
    const stranger = await runHook(
      "session-start",
      payload(dir, "SessionStart", { source: "clear" }, "stranger-session"),
      dir,
      { ARBEIT_AGENT: "opencode" },
    );
    assert.match(additionalContext(stranger), new RegExp(`- ${taskId} .*, held by claude-code until `));
  });

  it("session-start offers work in progress to resume once its claim ran out", async () => {
    const { letLeaseRunOut } = await import("../helpers/expiry.js");
    const left = (await arbeit(dir, ["call", "arbeit_task_create", JSON.stringify({ title: "Left behind" })], "gone"))
      .task.id;
    await arbeit(dir, ["call", "arbeit_task_start_work", JSON.stringify({ task_id: left })], "gone");
    const note = async () =>
      additionalContext(
        await hook("session-start", payload(dir, "SessionStart", { source: "clear" }, "later-session"), dir),
      );
    assert.match(
      await note(),
      new RegExp(`held by others .*:\\n(- .*\\n)*- ${left} "Left behind" .*, held by claude-code`),
    );
    await letLeaseRunOut({ cwd: dir }, left);
    assert.match(
      await note(),
      new RegExp(`In progress \\(resume with arbeit_task_start_work\\):\\n- ${left} "Left behind"`),
    );
  });

  it("session-start after stop-work briefs the session on the task it last worked on", async () => {
    await arbeit(dir, ["call", "arbeit_task_stop_work", JSON.stringify({ task_id: taskId })]);
    const text = additionalContext(
      await hook("session-start", payload(dir, "SessionStart", { source: "startup" }), dir),
    );
    assert.match(text, new RegExp(`^Arbeit: this session last worked on:\nTask ${taskId}`));
    assert.match(text, new RegExp(`arbeit_task_start_work \\{"task_id": "${taskId}"\\}`));
  });

  it("never fails the session: bad input is a note on stderr with exit 0", async () => {
    for (const name of HOOK_NAMES) {
      const result = await hook(name, "{not json", dir);
      assert.equal(result.code, 0, name);
      assert.equal(result.stdout, "");
      assert.match(result.stderr, new RegExp(`arbeit: ${name} hook skipped: the hook input on stdin is not JSON`));
    }
  });

  it("an unknown hook name exits 1 (not 2, which Claude Code reads as 'block')", async () => {
    const result = await hook("stop", "{}", dir);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /unknown hook/);
  });
});

describe("Claude Code hooks in a project without Arbeit", () => {
  // Every hook, with the payload Claude Code sends it; a Bash commit and a failure included.
  const event = (name: string) => name.replace(/(^|-)(\w)/g, (_m, _dash, c: string) => c.toUpperCase());
  const fields: Record<string, Record<string, unknown>> = {
    "session-start": { source: "startup" },
    "user-prompt-submit": { prompt: "Fix the login" },
    "post-tool-use": {
      tool_name: "Bash",
      tool_input: { command: "git commit -m x" },
      tool_response: { stdout: "[main 1a2b3c4] x\n 1 file changed", stderr: "" },
    },
    "post-tool-use-failure": { tool_name: "Bash", tool_input: { command: "false" }, error: "exit 1" },
    "subagent-start": { agent_id: "a1", agent_type: "general-purpose" },
    "subagent-stop": { agent_id: "a1", agent_type: "general-purpose" },
    "post-compact": { trigger: "auto", compact_summary: "summary" },
    "session-end": { reason: "exit" },
  };

  it("print nothing and exit 0, every one of them", async () => {
    const { dir, cleanup } = tempDir();
    for (const name of HOOK_NAMES) {
      const result = await hook(name, payload(dir, event(name), fields[name] ?? {}), dir);
      assert.deepEqual([result.code, result.stdout, result.stderr], [0, "", ""], name);
    }
    cleanup();
  });
});

describe("PostToolUse payloads to file touches", () => {
  const cases: Array<[string, Record<string, unknown>, unknown]> = [
    ["Read", { tool_name: "Read", tool_input: { file_path: "/p/a.ts" } }, { path: "/p/a.ts", operation: "read" }],
    ["Write", { tool_name: "Write", tool_input: { file_path: "/p/a.ts" } }, { path: "/p/a.ts", operation: "write" }],
    [
      "relative to cwd",
      { tool_name: "Edit", cwd: "/p", tool_input: { file_path: "a.ts" } },
      { path: "/p/a.ts", operation: "write" },
    ],
    [
      "NotebookEdit",
      { tool_name: "NotebookEdit", tool_input: { notebook_path: "/p/n.ipynb" } },
      { path: "/p/n.ipynb", operation: "write" },
    ],
    [
      "NotebookEdit without notebook_path",
      { tool_name: "NotebookEdit", tool_input: { file_path: "/p/n.ipynb" } },
      undefined,
    ],
    [
      "relative with .., left for trackFile to resolve after symlinks",
      { tool_name: "Edit", cwd: "/p", tool_input: { file_path: "link/../a.ts" } },
      { path: "/p/link/../a.ts", operation: "write" },
    ],
    [
      "a Windows drive-relative path is not joined to cwd",
      { tool_name: "Edit", cwd: "/p", tool_input: { file_path: "c:a.ts" } },
      { path: "c:a.ts", operation: "write" },
    ],
    ["Glob", { tool_name: "Glob", tool_input: { pattern: "*.ts" } }, undefined],
    ["no tool_input", { tool_name: "Read" }, undefined],
  ];
  for (const [label, fields, expected] of cases) {
    it(label, () => assert.deepEqual(touchFromPostToolUse(fields, "/base"), expected));
  }
});

describe("PostToolUse Bash payloads to the sha of a commit made", () => {
  const bash = (command: string, stdout: string, interrupted = false) => ({
    tool_name: "Bash",
    tool_input: { command },
    tool_response: { stdout, stderr: "", interrupted, isImage: false },
  });
  const made = "[main 3f2a1b9] Fix the login bug\n 1 file changed, 2 insertions(+)\n";
  const cases: Array<[string, Record<string, unknown>, string | undefined]> = [
    ["git commit", bash(`git commit -m "Fix the login bug"`, made), "3f2a1b9"],
    ["after git add, with -C", bash("git add -A && git -C . commit -qm x", made), "3f2a1b9"],
    ["the first commit", bash("git commit -m init", "[main (root-commit) 0c1d2e3] init\n"), "0c1d2e3"],
    ["a detached HEAD", bash("git commit -m x", "[detached HEAD 9abcdef] x\n"), "9abcdef"],
    [
      "nothing to commit",
      bash("git commit -m x", "On branch main\nnothing to commit, working tree clean\n"),
      undefined,
    ],
    ["not a commit, though git printed one", bash("git log -1 --oneline", made), undefined],
    ["interrupted", bash("git commit -m x", made, true), undefined],
    ["another tool", { ...bash("git commit -m x", made), tool_name: "Read" }, undefined],
    ["no tool_response", { tool_name: "Bash", tool_input: { command: "git commit" } }, undefined],
    ["with an assignment and env before git", bash("GIT_AUTHOR_NAME=x env A=1 git commit -m x", made), "3f2a1b9"],
    ["git with -c and --no-pager", bash("cd src && git -c user.name=x --no-pager commit -am x", made), "3f2a1b9"],
    ["a commit in an if", bash("if git commit -m x; then echo ok; fi", made), "3f2a1b9"],
    ["quiet", bash("git commit -qm x", ""), "HEAD"],
    ["echoed", bash("echo 'git commit -m x'", "git commit -m x\n"), undefined],
    ["echoed without quotes", bash("echo git commit -m x", "git commit -m x\n"), undefined],
    ["in a quoted argument", bash(`grep -r "git commit" docs`, ""), undefined],
    ["in a here-document", bash("cat > notes.md <<'EOF'\nrun git commit -m x\ngit commit -m y\nEOF", ""), undefined],
    ["in a comment", bash("npm test # then git commit -m x", ""), undefined],
    ["run by a shell's -c", bash(`sh -c "git add -A && git commit -m x"`, made), "3f2a1b9"],
    ["run by bash -lc with -o before it", bash(`bash -o pipefail -lc 'git commit -am x | cat'`, made), "3f2a1b9"],
    ["nested shells", bash(`sh -c "bash -c 'git commit -m x'"`, made), "3f2a1b9"],
    ["a shell's -c quoting only an echo", bash(`sh -c "echo git commit -m x"`, "git commit -m x\n"), undefined],
    ["a shell running a script file", bash("sh commit.sh", made), undefined],
    ["a dry run", bash("git commit --dry-run -am x", "On branch main\nChanges to be committed:\n"), undefined],
    [
      "a commit that failed inside a command that succeeded",
      {
        ...bash("git commit -m x nope; true", ""),
        tool_response: { stdout: "", stderr: "error: pathspec 'nope' did not match any file(s) known to git\n" },
      },
      undefined,
    ],
  ];
  for (const [label, fields, expected] of cases) {
    it(label, () => assert.equal(committedSha(fields), expected));
  }
});
