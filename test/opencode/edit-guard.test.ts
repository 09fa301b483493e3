import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { pathsBeforeToolCall } from "../../src/opencode/edit-guard.js";
import { type Hooks, pluginProject, startTask, succeed } from "./plugin-driver.js";

/**
 * The OpenCode plugin's `tool.execute.before` and file reservations: a call that would write a
 * file another session reserved exclusively is refused (the hook throws the reason); the holder,
 * its sub-agents and files nobody holds pass.
 */

const before = (hooks: Hooks, session: string, tool: string, args: unknown) =>
  hooks["tool.execute.before"]!({ tool, sessionID: session, callID: `call_${Math.random()}` }, { args });

describe("OpenCode plugin: file reservations before a tool call", () => {
  const project = pluginProject();

  const reserve = async (session: string, paths: string[], shared = false) => {
    const task = await startTask(project.hooks, session, `Task of ${session}`);
    await succeed(project.hooks, "arbeit_task_claim", { task_id: task, paths, ...(shared ? { shared } : {}) }, session);
    return task;
  };

  it("refuses write, edit, apply_patch and bash calls on another session's exclusive files, naming the holder", async () => {
    const task = await reserve("ses_alice", ["src/auth/**"]);
    const file = join(project.dir, "src", "auth", "session.ts");
    for (const [tool, args] of [
      ["write", { filePath: file, content: "x" }],
      ["edit", { filePath: "src/auth/session.ts", oldString: "a", newString: "b" }],
      [
        "apply_patch",
        { patchText: "*** Begin Patch\n*** Update File: src/auth/session.ts\n@@\n-a\n+b\n*** End Patch" },
      ],
      ["bash", { command: "echo x >> src/auth/session.ts" }],
    ] as const) {
      await assert.rejects(
        before(project.hooks, "ses_bob", tool, args),
        (error: Error) => {
          assert.match(
            error.message,
            /^Arbeit: src\/auth\/session\.ts is reserved exclusively by build \(session ses_alice, task /,
          );
          assert.ok(error.message.includes(task), error.message);
          return true;
        },
        tool,
      );
    }
    assert.equal(existsSync(file), false);
    // The shell read as a shell: a folder deleted or moved whole, after a `cd`, in a subshell.
    for (const command of ["cd src && rm -rf auth", "mv src lib", "(cd src/auth; echo x > session.ts)"]) {
      await assert.rejects(
        before(project.hooks, "ses_bob", "bash", { command }),
        /Arbeit: src\S* (?:is|includes files) reserved exclusively by build \(session ses_alice/,
        command,
      );
    }
  });

  it("lets the holder, files nobody holds, shared files and reads through", async () => {
    await reserve("ses_alice", ["src/auth/**"]);
    await reserve("ses_carol", ["docs/"], true);
    await before(project.hooks, "ses_alice", "write", { filePath: "src/auth/session.ts", content: "x" });
    await before(project.hooks, "ses_bob", "write", { filePath: "src/other.ts", content: "x" });
    await before(project.hooks, "ses_bob", "write", { filePath: "docs/guide.md", content: "x" });
    await before(project.hooks, "ses_bob", "read", { filePath: "src/auth/session.ts" });
    await before(project.hooks, "ses_bob", "bash", { command: "cat src/auth/session.ts" });
  });

  it("lets the edit through in a project switched to warn-only", async () => {
    await reserve("ses_alice", ["src/auth/**"]);
    await succeed(
      project.hooks,
      "arbeit_memory",
      { action: "set", key: "reservations.enforce", value: "warn" },
      "ses_alice",
    );
    await before(project.hooks, "ses_bob", "write", { filePath: "src/auth/session.ts", content: "x" });
  });
});

describe("the files an OpenCode tool call is about to write", () => {
  it("reads apply_patch's added, updated, deleted and moved-to files, and a bash call's workdir", () => {
    const patch = [
      "*** Begin Patch",
      "*** Add File: a/new.ts",
      "+x",
      "*** Update File: b/old.ts",
      "*** Move to: b/renamed.ts",
      "@@",
      "*** Delete File: c/gone.ts",
      "*** End Patch",
    ].join("\n");
    assert.deepEqual(pathsBeforeToolCall("apply_patch", { patchText: patch }, "/p"), [
      "/p/a/new.ts",
      "/p/b/old.ts",
      "/p/b/renamed.ts",
      "/p/c/gone.ts",
    ]);
    assert.deepEqual(pathsBeforeToolCall("bash", { command: "rm x.ts", workdir: "sub" }, "/p"), [
      "/p/sub/x.ts",
      "/p/sub/x.ts/**",
    ]);
    assert.deepEqual(pathsBeforeToolCall("read", { filePath: "x.ts" }, "/p"), []);
  });
});
