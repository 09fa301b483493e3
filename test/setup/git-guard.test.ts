import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";

/**
 * `arbeit setup git` with real git: the pre-commit guard refuses a commit staging a file another
 * session reserved exclusively, naming the holder, keeps the hook that was there (and runs it),
 * lets `--no-verify` through, and `--remove` puts everything back as it was.
 */

function git(dir: string, args: string[], env: Record<string, string> = {}) {
  const clean = { ...process.env };
  for (const key of Object.keys(clean)) if (key.startsWith("ARBEIT_") || key.startsWith("GIT_")) delete clean[key];
  return spawnSync("git", args, {
    cwd: dir,
    encoding: "utf8",
    env: {
      ...clean,
      GIT_AUTHOR_NAME: "t",
      GIT_AUTHOR_EMAIL: "t@example.com",
      GIT_COMMITTER_NAME: "t",
      GIT_COMMITTER_EMAIL: "t@example.com",
      ...env,
    },
  });
}

const head = (dir: string) => git(dir, ["rev-parse", "HEAD"]).stdout.trim();

describe("arbeit setup git: the pre-commit guard", () => {
  it("refuses a commit of another session's exclusively reserved file, naming the holder; --no-verify and the holder get through", async () => {
    const { dir, cleanup } = tempDir();
    try {
      assert.equal(git(dir, ["init", "-q", "-b", "main"]).status, 0);
      assert.equal((await runCli(["init"], { cwd: dir })).code, 0);
      writeFileSync(join(dir, "README.md"), "x\n");
      git(dir, ["add", "README.md"]);
      assert.equal(git(dir, ["commit", "-q", "-m", "first"]).status, 0);
      // A hook of the user's own, which must keep running.
      const own = join(dir, ".git", "hooks", "pre-commit");
      writeFileSync(own, `#!/bin/sh\necho ran >> "${join(dir, "own-hook.log")}"\n`, { mode: 0o755 });

      const setup = await runCli(["setup", "git", "--json"], { cwd: dir });
      assert.equal(setup.code, 0, setup.stdout + setup.stderr);
      assert.ok(existsSync(join(dir, ".git", "hooks", "pre-commit.before-arbeit")), "the old hook is kept beside");
      assert.match(readFileSync(own, "utf8"), /arbeit: pre-commit guard/);
      const again = await runCli(["setup", "git", "--json"], { cwd: dir });
      assert.equal(again.json.data.files[0].action, "unchanged", "setting up twice changes nothing");

      const reserved = await runCli(
        [
          "call",
          "arbeit_task_claim",
          JSON.stringify({ paths: ["src/auth/**"] }),
          "--session",
          "ses-alice",
          "--agent",
          "alice",
        ],
        { cwd: dir },
      );
      assert.equal(reserved.code, 0, reserved.stdout);
      mkdirSync(join(dir, "src", "auth"), { recursive: true });
      writeFileSync(join(dir, "src", "auth", "session.ts"), "export {};\n");
      writeFileSync(join(dir, "notes.md"), "free\n");
      git(dir, ["add", "src/auth/session.ts", "notes.md"]);
      const before = head(dir);

      const refused = git(dir, ["commit", "-q", "-m", "touch auth"], { ARBEIT_SESSION: "ses-bob" });
      assert.notEqual(refused.status, 0);
      assert.match(refused.stderr, /commit refused/);
      assert.match(refused.stderr, /src\/auth\/session\.ts: alice \(session ses-alice\) until 20\d\d-/);
      assert.match(refused.stderr, /Unstage them/);
      // The refusal reaches agents in their Bash result: it names no way around the guard.
      assert.doesNotMatch(refused.stderr, /no-verify|core\.hooksPath/);
      assert.doesNotMatch(readFileSync(own, "utf8"), /no-verify/, "nor does the hook an agent may read");
      assert.equal(head(dir), before, "nothing was committed");
      assert.equal(readFileSync(join(dir, "own-hook.log"), "utf8"), "ran\n", "the user's own hook ran first");

      const holder = git(dir, ["commit", "-q", "-m", "alice commits"], { ARBEIT_SESSION: "ses-alice" });
      assert.equal(holder.status, 0, holder.stderr);
      assert.notEqual(head(dir), before);

      writeFileSync(join(dir, "src", "auth", "session.ts"), "export const x = 1;\n");
      git(dir, ["add", "src/auth/session.ts"]);
      assert.notEqual(
        git(dir, ["commit", "-q", "-m", "person"]).status,
        0,
        "a person without a session is refused too",
      );
      const escaped = git(dir, ["commit", "-q", "--no-verify", "-m", "on purpose"]);
      assert.equal(escaped.status, 0, escaped.stderr);

      const removed = await runCli(["setup", "git", "--remove", "--json"], { cwd: dir });
      assert.equal(removed.code, 0, removed.stdout + removed.stderr);
      assert.equal(readFileSync(own, "utf8"), `#!/bin/sh\necho ran >> "${join(dir, "own-hook.log")}"\n`);
      assert.ok(!existsSync(join(dir, ".git", "hooks", "pre-commit.before-arbeit")));
    } finally {
      cleanup();
    }
  });

  it("under warn-only (memory reservations.enforce = warn) warns, naming the holder, and lets the commit through", async () => {
    const { dir, cleanup } = tempDir();
    try {
      assert.equal(git(dir, ["init", "-q", "-b", "main"]).status, 0);
      assert.equal((await runCli(["init"], { cwd: dir })).code, 0);
      assert.equal((await runCli(["setup", "git", "--json"], { cwd: dir })).code, 0);
      const taskId = (await runCli(["task", "create", "Rework auth", "--json"], { cwd: dir })).json.data.task.id;
      const reserved = await runCli(
        [
          "call",
          "arbeit_task_claim",
          JSON.stringify({ task_id: taskId, paths: ["src/auth/**"] }),
          "--session",
          "ses-alice",
          "--agent",
          "alice",
        ],
        { cwd: dir },
      );
      assert.equal(reserved.code, 0, reserved.stdout);
      mkdirSync(join(dir, "src", "auth"), { recursive: true });
      writeFileSync(join(dir, "src", "auth", "session.ts"), "export {};\n");
      git(dir, ["add", "src/auth/session.ts"]);

      // Enforced (the default): refused.
      const before = head(dir);
      assert.notEqual(git(dir, ["commit", "-q", "-m", "refused"], { ARBEIT_SESSION: "ses-bob" }).status, 0);
      assert.equal(head(dir), before);

      const warnOnly = JSON.stringify({ action: "set", key: "reservations.enforce", value: "warn" });
      assert.equal((await runCli(["call", "arbeit_memory", warnOnly], { cwd: dir })).code, 0);
      const warned = git(dir, ["commit", "-q", "-m", "warned"], { ARBEIT_SESSION: "ses-bob" });
      assert.equal(warned.status, 0, warned.stderr);
      assert.notEqual(head(dir), before, "the commit was made");
      assert.match(warned.stderr, /warning: files another session reserved exclusively are staged/);
      assert.match(warned.stderr, /warnings only/);
      assert.match(
        warned.stderr,
        new RegExp(`src/auth/session\\.ts: alice \\(session ses-alice, task ${taskId}\\) until 20\\d\\d-`),
      );
      assert.doesNotMatch(warned.stderr, /commit refused/);

      // A person asking gets the same answer the hooks give: warn, exit 0.
      const asked = await runCli(["check-edit", "src/auth/session.ts", "--session", "ses-bob", "--json"], { cwd: dir });
      assert.equal(asked.code, 0, asked.stdout);
      assert.equal(asked.json.data.decision, "warn");
      assert.match(asked.json.data.reason, /warnings only/);
      assert.equal(asked.json.data.conflicts[0].mode, "exclusive");

      // Switched back: refused again.
      const enforced = JSON.stringify({ action: "delete", key: "reservations.enforce" });
      assert.equal((await runCli(["call", "arbeit_memory", enforced], { cwd: dir })).code, 0);
      writeFileSync(join(dir, "src", "auth", "session.ts"), "export const y = 2;\n");
      git(dir, ["add", "src/auth/session.ts"]);
      const again = git(dir, ["commit", "-q", "-m", "refused again"], { ARBEIT_SESSION: "ses-bob" });
      assert.notEqual(again.status, 0);
      assert.match(again.stderr, /commit refused/);
    } finally {
      cleanup();
    }
  });

  it("refuses a staged move or deletion of a reserved file, naming the reserved path the file leaves", async () => {
    const { dir, cleanup } = tempDir();
    try {
      assert.equal(git(dir, ["init", "-q", "-b", "main"]).status, 0);
      assert.equal((await runCli(["init"], { cwd: dir })).code, 0);
      mkdirSync(join(dir, "src", "auth"), { recursive: true });
      writeFileSync(
        join(dir, "src", "auth", "session.ts"),
        "export const session = 'a long enough body to be a rename';\n",
      );
      writeFileSync(
        join(dir, "src", "auth", "token.ts"),
        "export const token = 'another long enough body for renames';\n",
      );
      git(dir, ["add", "."]);
      assert.equal(git(dir, ["commit", "-q", "-m", "first"]).status, 0);
      assert.equal((await runCli(["setup", "git", "--json"], { cwd: dir })).code, 0);
      const claim = JSON.stringify({ paths: ["src/auth/**"] });
      const reserved = await runCli(
        ["call", "arbeit_task_claim", claim, "--session", "ses-alice", "--agent", "alice"],
        {
          cwd: dir,
        },
      );
      assert.equal(reserved.code, 0, reserved.stdout);
      const before = head(dir);
      const bob = { ARBEIT_SESSION: "ses-bob" };
      const attempts: Array<[string, string[][]]> = [
        ["git mv of a reserved file out of the reserved folder", [["mv", "src/auth/session.ts", "lib-session.ts"]]],
        ["git mv of the reserved folder", [["mv", "src/auth", "src/old-auth"]]],
        ["git rm of a reserved file", [["rm", "-q", "src/auth/token.ts"]]],
      ];
      for (const [label, steps] of attempts) {
        for (const step of steps) assert.equal(git(dir, step).status, 0, `${label}: ${step.join(" ")}`);
        const refused = git(dir, ["commit", "-q", "-m", label], bob);
        assert.notEqual(refused.status, 0, `${label}: committed`);
        assert.match(refused.stderr, /commit refused/, label);
        assert.match(refused.stderr, /src\/auth\/(session|token)\.ts: alice \(session ses-alice\)/, label);
        assert.equal(head(dir), before, label);
        assert.equal(git(dir, ["reset", "-q", "--hard"]).status, 0);
      }
      // Renames stay detected for the rest of git: only the guard reads both sides.
      assert.equal(git(dir, ["mv", "src/auth/session.ts", "lib-session.ts"]).status, 0);
      const holder = git(dir, ["commit", "-q", "-m", "alice moves it"], { ARBEIT_SESSION: "ses-alice" });
      assert.equal(holder.status, 0, holder.stderr);
    } finally {
      cleanup();
    }
  });

  it("never blocks a commit where it cannot ask (no Arbeit store in the repository)", async () => {
    const { dir, cleanup } = tempDir();
    try {
      git(dir, ["init", "-q", "-b", "main"]);
      mkdirSync(join(dir, ".arbeit"));
      const setup = await runCli(["setup", "git", "--json"], { cwd: dir });
      assert.equal(setup.code, 0, setup.stdout + setup.stderr);
      // The store setup found is gone: the guard cannot ask.
      spawnSync("rm", ["-rf", join(dir, ".arbeit")]);
      writeFileSync(join(dir, "a.txt"), "a\n");
      git(dir, ["add", "a.txt"]);
      const commit = git(dir, ["commit", "-q", "-m", "a"]);
      assert.equal(commit.status, 0, commit.stderr);
      assert.match(commit.stderr, /not checked for file reservations/);
    } finally {
      cleanup();
    }
  });
});
