import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { afterTool, pluginProject, startTask, succeed } from "./plugin-driver.js";

/** The plugin records a commit on the session's task only when its bash call made it. */

const git = (dir: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.name=T", "-c", "user.email=t@example.com", ...args], { cwd: dir, encoding: "utf8" });

describe("the OpenCode plugin's commit recording", () => {
  const project = pluginProject((dir) => {
    git(dir, "init", "-q", "-b", "main");
    writeFileSync(join(dir, "a.txt"), "a\n");
    git(dir, "add", ".");
    git(dir, "commit", "-q", "-m", "Start");
  });
  const commits = async (taskId: string) =>
    (await succeed(project.hooks, "arbeit_task_get", { task_id: taskId, include: ["commits"] })).commits.map(
      (commit: any) => commit.subject,
    );

  it("records the commit a bash `git commit` made, and none from a call that failed, echoed or dry-ran one", async () => {
    const { dir, hooks } = project;
    const taskId = await startTask(hooks);
    // Someone else's commit just before each call: HEAD is new, but not the session's.
    writeFileSync(join(dir, "a.txt"), "b\n");
    git(dir, "commit", "-qam", "A commit by someone else");
    writeFileSync(join(dir, "a.txt"), "c\n");
    const bash = (command: string, output: string, exit: number) =>
      afterTool(hooks, "ses_main", "bash", { command }, { output, exit, description: "" });
    // A pre-commit hook that refused the commit without a word: only the exit code tells.
    await bash("git commit -qam x", "", 1);
    await bash("echo 'git commit -qam x'", "git commit -qam x\n", 0);
    await bash("git commit --dry-run -am x", git(dir, "commit", "--dry-run", "-am", "x"), 0);
    assert.deepEqual(await commits(taskId), []);
    const made = git(dir, "commit", "-am", "Use c");
    await bash("git commit -am 'Use c'", made, 0);
    assert.deepEqual(await commits(taskId), ["Use c"]);
  });
});
