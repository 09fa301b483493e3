import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { CLI, type CliResult, runCli } from "../helpers/cli.js";
import { filePermissionsMissing, withFilePermissions } from "../helpers/file-permissions.js";
import { requirement } from "../helpers/requirements.js";
import { tempDir } from "../helpers/temp.js";

/**
 * Host configuration files of the wrong kind: setup checks every file it will write before it
 * writes any, and refuses with SETUP_REFUSED naming the file and what is wrong; `arbeit status`
 * reports them. A named pipe is never opened (reading one waits for a writer forever).
 */

const permissionsSkip = requirement("the unwritable CLAUDE.md test", filePermissionsMissing());

/** A hang is a failure too: each run is given this long. */
const RUN_TIMEOUT_MS = 60_000;

function setup(dir: string, ...args: string[]): Promise<CliResult> {
  return runCli(["setup", ...args, "--json"], { cwd: dir });
}

function refusal(result: CliResult, pattern: RegExp, target = "claude"): void {
  assert.equal(result.code, 1, result.stdout + result.stderr);
  assert.equal(result.json?.success, false, result.stdout + result.stderr);
  assert.equal(result.json.error.code, "SETUP_REFUSED");
  assert.match(result.json.error.message, pattern);
  assert.match(result.stderr, new RegExp(`setup ${target} (?:--remove )?refused: `));
  assert.doesNotMatch(result.stderr, /\n\s+at /, "no stack trace");
}

/** The project's entries: a refused setup leaves exactly what was there. */
const entries = (dir: string) => readdirSync(dir).sort();

function project(prepare: (dir: string) => void): { dir: string; cleanup(): void } {
  const made = tempDir("arbeit-kinds-");
  prepare(made.dir);
  return made;
}

const cases: Array<[string, (dir: string) => void, RegExp]> = [
  ["CLAUDE.md is a folder", (dir) => mkdirSync(join(dir, "CLAUDE.md")), /CLAUDE\.md is a folder, not a file/],
  [
    ".claude is a file",
    (dir) => writeFileSync(join(dir, ".claude"), "notes\n"),
    /\.claude is a file, not a folder, so setup cannot write \.claude\/settings\.json/,
  ],
  [".mcp.json is a folder", (dir) => mkdirSync(join(dir, ".mcp.json")), /\.mcp\.json is a folder, not a file/],
  [
    ".mcp.json is a named pipe",
    (dir) => spawnSync("mkfifo", [join(dir, ".mcp.json")]),
    /\.mcp\.json is a named pipe \(FIFO\), not a file/,
  ],
  [
    ".claude/settings.json is a named pipe",
    (dir) => {
      mkdirSync(join(dir, ".claude"));
      spawnSync("mkfifo", [join(dir, ".claude", "settings.json")]);
    },
    /settings\.json is a named pipe \(FIFO\), not a file/,
  ],
];

describe("arbeit setup claude with configuration files of the wrong kind", () => {
  for (const [label, prepare, pattern] of cases) {
    it(`${label}: refused with SETUP_REFUSED, and no file written`, { timeout: RUN_TIMEOUT_MS }, async () => {
      const { dir, cleanup } = project(prepare);
      const before = entries(dir);
      refusal(await setup(dir, "claude"), pattern);
      assert.deepEqual(entries(dir), before);
      // --remove reads the same files; a file it cannot read is refused too. (`.claude` a file
      // holds no settings: there is nothing to take out.)
      const removed = await setup(dir, "claude", "--remove");
      if (label === ".claude is a file") assert.equal(removed.code, 0, removed.stderr);
      else refusal(removed, pattern);
      assert.deepEqual(entries(dir), before);
      cleanup();
    });
  }

  it("CLAUDE.md not writable: refused before .claude/settings.json or .mcp.json is written", {
    skip: permissionsSkip,
  }, async () => {
    const { dir, cleanup } = project((dir) => writeFileSync(join(dir, "CLAUDE.md"), "# Our notes\n"));
    chmodSync(join(dir, "CLAUDE.md"), 0o444);
    const [command, args] = withFilePermissions(process.execPath, [CLI, "setup", "claude", "--json"]);
    const run = spawnSync(command, args, {
      cwd: dir,
      encoding: "utf8",
      timeout: RUN_TIMEOUT_MS,
      env: { PATH: process.env.PATH ?? "", HOME: dir },
    });
    let json: any;
    try {
      json = JSON.parse(run.stdout);
    } catch {
      json = undefined;
    }
    refusal({ code: run.status ?? -1, stdout: run.stdout, stderr: run.stderr, json }, /CLAUDE\.md cannot be written/);
    assert.deepEqual(entries(dir), ["CLAUDE.md"]);
    cleanup();
  });
});

describe("arbeit status with configuration files of the wrong kind", () => {
  it("reports a named pipe or a folder instead of waiting on it", { timeout: RUN_TIMEOUT_MS }, async () => {
    const { dir, cleanup } = project((dir) => {
      spawnSync("mkfifo", [join(dir, ".mcp.json")]);
      spawnSync("mkfifo", [join(dir, "CLAUDE.md")]);
      mkdirSync(join(dir, ".opencode", "plugin", "arbeit.js"), { recursive: true });
    });
    assert.equal((await runCli(["init"], { cwd: dir })).code, 0);
    const result = await runCli(["status", "--json"], { cwd: dir });
    assert.equal(result.code, 1, result.stderr);
    const unreadable = result.json.attention.filter((item: any) => item.code === "HOST_CONFIG_UNREADABLE");
    assert.deepEqual(
      unreadable.map((item: any) => item.message.replace(`${dir}/`, "")),
      [
        ".mcp.json is a named pipe (FIFO), not a file; move it aside, then run again.",
        "CLAUDE.md is a named pipe (FIFO), not a file; move it aside, then run again.",
        ".opencode/plugin/arbeit.js is a folder, not a file; move it aside, then run again.",
      ],
    );
    cleanup();
  });
});

/**
 * Symbolic links among the files setup writes: a link to a file is followed (the file it names is
 * read and written), a dangling link or a loop is refused before anything is written, since
 * writing through it fails half-way or creates a file in a place the user never named.
 */
const linked: Array<[string, string[], (dir: string) => void, RegExp]> = [
  [
    "CLAUDE.md a dangling link into a missing folder",
    ["claude"],
    (dir) => symlinkSync(join(dir, "gone", "CLAUDE.md"), join(dir, "CLAUDE.md")),
    /CLAUDE\.md is a symbolic link to .*gone\/CLAUDE\.md, which does not exist/,
  ],
  [
    ".mcp.json a link to itself",
    ["claude"],
    (dir) => symlinkSync(".mcp.json", join(dir, ".mcp.json")),
    /\.mcp\.json is a symbolic link to \.mcp\.json, which cannot be followed/,
  ],
  [
    ".claude a dangling link",
    ["claude"],
    (dir) => symlinkSync("elsewhere/.claude", join(dir, ".claude")),
    /\.claude is a symbolic link to elsewhere\/\.claude, which does not exist/,
  ],
  [
    "AGENTS.md a dangling link into a missing folder",
    ["opencode"],
    (dir) => symlinkSync(join(dir, "gone", "AGENTS.md"), join(dir, "AGENTS.md")),
    /AGENTS\.md is a symbolic link to .*gone\/AGENTS\.md, which does not exist/,
  ],
  [
    ".opencode a dangling link",
    ["opencode"],
    (dir) => symlinkSync("gone", join(dir, ".opencode")),
    /\.opencode is a symbolic link to gone, which does not exist/,
  ],
  [
    ".arbeit (where setup creates the database) a dangling link",
    ["claude"],
    (dir) => symlinkSync("gone/.arbeit", join(dir, ".arbeit")),
    /\.arbeit is a symbolic link to gone\/\.arbeit, which does not exist/,
  ],
  [
    ".arbeit a file, for setup opencode",
    ["opencode"],
    (dir) => writeFileSync(join(dir, ".arbeit"), "x\n"),
    /\.arbeit is a file, not a folder, so setup cannot write \.arbeit\/arbeit\.db/,
  ],
  [
    "opencode.json a dangling link (--npm)",
    ["opencode", "--npm"],
    (dir) => symlinkSync("gone/opencode.json", join(dir, "opencode.json")),
    /opencode\.json is a symbolic link to gone\/opencode\.json, which does not exist/,
  ],
];

describe("arbeit setup with symbolic links among its files", () => {
  for (const [label, args, prepare, pattern] of linked) {
    it(`${label}: refused with SETUP_REFUSED, and no file written`, { timeout: RUN_TIMEOUT_MS }, async () => {
      const { dir, cleanup } = project(prepare);
      const before = entries(dir);
      refusal(await setup(dir, ...args), pattern, args[0]);
      // A link to nowhere holds nothing of Arbeit's: taking Arbeit out has nothing to do there.
      if (!args.includes("--npm")) assert.equal((await setup(dir, args[0]!, "--remove")).code, 0);
      assert.deepEqual(entries(dir), before);
      cleanup();
    });
  }

  it("CLAUDE.md a link to a file elsewhere: that file gets the block", { timeout: RUN_TIMEOUT_MS }, async () => {
    const { dir, cleanup } = project((dir) => {
      mkdirSync(join(dir, "docs"));
      writeFileSync(join(dir, "docs", "AGENT-NOTES.md"), "# Notes\n");
      symlinkSync("docs/AGENT-NOTES.md", join(dir, "CLAUDE.md"));
    });
    const result = await setup(dir, "claude");
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.match(readFileSync(join(dir, "docs", "AGENT-NOTES.md"), "utf8"), /^# Notes\n\n<!-- arbeit:start -->/);
    assert.ok(lstatSync(join(dir, "CLAUDE.md")).isSymbolicLink(), "the link stays a link");
    cleanup();
  });
});

describe("arbeit setup git with a pre-commit hook of the wrong kind", () => {
  const gitCases: Array<[string, (hooks: string) => void, RegExp]> = [
    [
      "a dangling link",
      (hooks) => symlinkSync("/nonexistent/hooks/pre-commit", join(hooks, "pre-commit")),
      /pre-commit is a symbolic link to \/nonexistent\/hooks\/pre-commit, which does not exist/,
    ],
    ["a named pipe", (hooks) => spawnSync("mkfifo", [join(hooks, "pre-commit")]), /pre-commit is a named pipe/],
    ["a folder", (hooks) => mkdirSync(join(hooks, "pre-commit")), /pre-commit is a folder, not a file/],
  ];
  it("core.hooksPath naming a folder under a missing one: refused with SETUP_REFUSED", {
    timeout: RUN_TIMEOUT_MS,
  }, async () => {
    const { dir, cleanup } = project((dir) => {
      spawnSync("git", ["init", "-q", dir]);
      spawnSync("git", ["config", "core.hooksPath", join(dir, "gone", "hooks")], { cwd: dir });
    });
    const before = entries(dir);
    refusal(await setup(dir, "git"), /gone does not exist, so setup cannot write pre-commit; create it/, "git");
    assert.deepEqual(entries(dir), before);
    cleanup();
  });

  for (const [label, prepare, pattern] of gitCases) {
    it(`pre-commit ${label}: refused with SETUP_REFUSED, the hooks folder untouched`, {
      timeout: RUN_TIMEOUT_MS,
    }, async () => {
      const { dir, cleanup } = project((dir) => {
        spawnSync("git", ["init", "-q", dir]);
      });
      const hooks = join(dir, ".git", "hooks");
      mkdirSync(hooks, { recursive: true });
      prepare(hooks);
      const before = readdirSync(hooks).sort();
      const result = await runCli(["setup", "git", "--json"], { cwd: dir });
      assert.equal(result.code, 1, result.stdout + result.stderr);
      assert.equal(result.json?.error?.code, "SETUP_REFUSED", result.stdout + result.stderr);
      assert.match(result.json.error.message, pattern);
      assert.doesNotMatch(result.stderr, /\n\s+at /, "no stack trace");
      assert.deepEqual(readdirSync(hooks).sort(), before);
      cleanup();
    });
  }
});
