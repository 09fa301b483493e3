import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { type CliProject, cliProject } from "./support.js";

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "t",
      GIT_AUTHOR_EMAIL: "t@example.com",
      GIT_COMMITTER_NAME: "t",
      GIT_COMMITTER_EMAIL: "t@example.com",
    },
  });

/**
 * Agents side by side in linked git worktrees of one repository share the main checkout's store:
 * what one writes in its worktree, the others (and the main checkout) read, and files are
 * recorded relative to the worktree, as the same paths in every checkout.
 */
describe("git worktrees share the main checkout's store", () => {
  let project: CliProject;
  after(() => project?.cleanup());

  it("reads and writes the main checkout's tasks from a linked worktree and its subfolders", async () => {
    project = await cliProject();
    const main = project.dir;
    git(main, "init", "-q", "-b", "main");
    mkdirSync(join(main, "src"));
    writeFileSync(join(main, "src", "a.ts"), "export {};\n");
    git(main, "add", "src");
    git(main, "commit", "-q", "-m", "first");
    const worktree = join(main, "..", `${main.split("/").at(-1)}-wt`);
    git(main, "worktree", "add", "-q", worktree, "-b", "feature");
    try {
      const planned = await project.ok(["task", "create", "Planned in main"]);
      const inWorktree = { cwd: worktree, env: { ARBEIT_SESSION: "wt-agent" } };
      const listed = await project.ok(["query", "tasks"], inWorktree);
      assert.deepEqual(
        listed.tasks.map((task: { id: string }) => task.id),
        [planned.task.id],
      );

      const made = await project.ok(["task", "create", "Made in the worktree"], inWorktree);
      await project.ok(["task", "start", made.task.id], inWorktree);
      const tracked = await project.ok(["track", "a.ts"], { ...inWorktree, cwd: join(worktree, "src") });
      assert.equal(tracked.tracked, true, JSON.stringify(tracked));
      assert.equal(tracked.file_path, "src/a.ts");

      const seenFromMain = await project.ok(["task", "get", made.task.id, "--include", "files"]);
      assert.deepEqual(
        seenFromMain.files.map((file: { file_path: string }) => file.file_path),
        ["src/a.ts"],
      );
      // One store: the worktree made no `.arbeit/` of its own.
      assert.throws(() => execFileSync("ls", [join(worktree, ".arbeit")], { stdio: "ignore" }));
    } finally {
      git(main, "worktree", "remove", "--force", worktree);
    }
  });
});
