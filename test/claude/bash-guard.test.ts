import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";
import { hookPayload, runHook } from "./hook-input.js";

/**
 * Claude Code's PreToolUse hook on Bash (`arbeit hook pre-tool-use` through the built CLI, real
 * payloads, a real git repository): a command that changes a file another live session reserved
 * exclusively is denied however the shell spells it: by deleting or moving the folder holding
 * it, after a `cd`, inside quotes, a subshell or `sh -c`, through git, or by committing it while
 * skipping the commit guard. Reading the file, or writing elsewhere, passes.
 */

const ALICE = "alice-bash-session";
const BOB = "bob-bash-session";

function git(dir: string, args: string[]) {
  const env: NodeJS.ProcessEnv = { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@example.com" };
  for (const key of Object.keys(env)) if (key.startsWith("ARBEIT_")) delete env[key];
  const result = spawnSync("git", args, {
    cwd: dir,
    encoding: "utf8",
    env: { ...env, GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@example.com" },
  });
  assert.equal(result.status, 0, `git ${args.join(" ")}: ${result.stderr}`);
}

async function call(dir: string, session: string, tool: string, input: object): Promise<any> {
  const result = await runCli(
    ["--session", session, "--agent", session.split("-")[0]!, "call", tool, JSON.stringify(input)],
    {
      cwd: dir,
    },
  );
  assert.equal(result.code, 0, result.stdout + result.stderr);
  return result.json.data;
}

/** Bob's Bash call, run from `cwd`: Claude Code's answer, or undefined when the hook is silent. */
async function bash(dir: string, command: string, cwd = dir) {
  const payload = hookPayload(dir, BOB, "PreToolUse", {
    tool_name: "Bash",
    tool_input: { command },
    tool_use_id: "toolu_1",
  });
  const result = await runHook(
    "pre-tool-use",
    payload.replace(`"cwd":${JSON.stringify(dir)}`, `"cwd":${JSON.stringify(cwd)}`),
    dir,
  );
  assert.equal(result.code, 0, result.stderr);
  return result.stdout.trim() === "" ? undefined : JSON.parse(result.stdout).hookSpecificOutput;
}

describe("Claude Code PreToolUse on Bash: reserved files however the shell reaches them", () => {
  let dir: string;
  let cleanup: () => void;

  before(async () => {
    ({ dir, cleanup } = tempDir("arbeit-bash-guard-"));
    mkdirSync(join(dir, "src", "auth"), { recursive: true });
    mkdirSync(join(dir, "lib"));
    writeFileSync(join(dir, "src", "auth", "session.ts"), "export const session = 1;\n");
    writeFileSync(join(dir, "src", "free.ts"), "export const free = 1;\n");
    writeFileSync(join(dir, "notes.md"), "notes\n");
    git(dir, ["init", "-q", "-b", "main"]);
    git(dir, ["add", "."]);
    git(dir, ["commit", "-q", "-m", "first"]);
    assert.equal((await runCli(["init"], { cwd: dir })).code, 0);
    const task = (await call(dir, ALICE, "arbeit_task_create", { title: "Rework sessions" })).task.id;
    await call(dir, ALICE, "arbeit_task_start_work", { task_id: task });
    await call(dir, ALICE, "arbeit_task_claim", { task_id: task, paths: ["src/auth/session.ts"] });
  });

  after(() => cleanup());

  const denied: Array<[string, string?]> = [
    ["rm -rf src"],
    ["rm -r src/auth/"],
    ["rm -rf ."],
    ["mv src/auth lib/"],
    ["mv src old-src"],
    ["cd src/auth && echo x > session.ts"],
    ["cd src; cd auth; truncate -s 0 session.ts"],
    ["(cd src && rm -rf auth)"],
    ["echo x > session.ts", "src/auth"],
    ['echo "a && b; c" > src/auth/session.ts'],
    ["printf '%s' \"$(date)\" | tee src/auth/session.ts >/dev/null"],
    ["echo $(rm -rf src/auth)"],
    ["sh -c 'cd src && rm -rf auth'"],
    ['bash -lc "mv src/auth/session.ts /tmp/"'],
    ["find src -name '*.ts' -delete"],
    ["find . -type f -exec rm -f {} +"],
    ["ln -sf /tmp/other src/auth/session.ts"],
    ["cp notes.md src/auth/session.ts"],
    ["install -m 644 notes.md src/auth/session.ts"],
    ["dd if=/dev/zero of=src/auth/session.ts bs=1 count=1"],
    ["git rm -q src/auth/session.ts"],
    ["git mv src/auth lib/auth"],
    ["git -C src checkout -- auth/session.ts"],
    ["git restore src/auth"],
    ["git clean -fdx src"],
    ["sudo -u nobody rm -rf src"],
    ["timeout 5 shred -u src/auth/session.ts"],
    ["perl -pi -e 's/1/2/' src/auth/session.ts"],
  ];
  for (const [command, cwd] of denied)
    it(`denies ${JSON.stringify(command)}${cwd ? ` run in ${cwd}` : ""}`, async () => {
      const out = await bash(dir, command, cwd ? join(dir, cwd) : dir);
      assert.equal(out?.permissionDecision, "deny", JSON.stringify(out));
      assert.match(out.permissionDecisionReason, /reserved exclusively by alice \(session alice-bash-session, task /);
    });

  const allowed = [
    "cat src/auth/session.ts > /tmp/arbeit-copy.txt",
    "cd src/auth && cat session.ts | wc -l",
    "rm -rf lib build",
    "cd src && echo x > free.ts",
    "cp src/auth/session.ts lib/",
    "cp notes.md src/auth/",
    "cp -r lib src",
    "mv src/free.ts lib/",
    "echo 'rm -rf src' > notes.md",
    "git log --oneline -- src/auth",
    "find src -name '*.ts'",
    "(cd src/auth) && echo x > notes.md",
  ];
  for (const command of allowed)
    it(`lets ${JSON.stringify(command)} through silently`, async () => {
      assert.equal(await bash(dir, command), undefined);
    });

  it("denies a commit, --no-verify or not, that carries another session's reserved file; another commit passes", async () => {
    writeFileSync(join(dir, "src", "auth", "session.ts"), "export const session = 2;\n");
    git(dir, ["add", "src/auth/session.ts"]);
    for (const command of [
      'git commit --no-verify -m "fix"',
      "git commit -n -m fix",
      "git -c core.hooksPath=/dev/null commit -qm fix",
      "cd src && git commit -m fix",
    ]) {
      const out = await bash(dir, command);
      assert.equal(out?.permissionDecision, "deny", command);
      assert.match(out.permissionDecisionReason, /src\/auth\/session\.ts is reserved exclusively by alice/);
    }
    git(dir, ["reset", "-q"]);
    // Unstaged, the change is carried by `commit -a`, `stash` and `reset --hard` only.
    assert.equal((await bash(dir, "git commit --no-verify -m fix"))?.permissionDecision, undefined);
    for (const command of ["git commit -am fix --no-verify", "git stash", "git reset --hard HEAD"])
      assert.equal((await bash(dir, command))?.permissionDecision, "deny", command);
    writeFileSync(join(dir, "notes.md"), "more notes\n");
    git(dir, ["add", "notes.md"]);
    assert.equal(await bash(dir, "git commit --no-verify -m notes"), undefined);
  });
});
