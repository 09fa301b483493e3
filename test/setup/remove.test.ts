import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { type CliResult, runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";

/**
 * `arbeit setup claude | opencode --remove` takes out what setup added and nothing of the
 * user's: after setup and --remove, every file is as it was before, byte for byte.
 */

const REPO = fileURLToPath(new URL("../../", import.meta.url));

function setup(dir: string, ...args: string[]): Promise<CliResult> {
  return runCli(["setup", ...args, "--json"], { cwd: dir });
}

const read = (path: string) => readFileSync(path, "utf8");
/** JSON as setup writes it; setup rewrites other formatting the same way. */
const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

/** Every file of the project and its bytes, without the database, which --remove keeps. */
function snapshot(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (folder: string) => {
    for (const name of readdirSync(folder)) {
      const path = join(folder, name);
      const rel = relative(dir, path);
      if (rel === ".arbeit" || rel === "node_modules") continue;
      if (statSync(path).isDirectory()) {
        files[`${rel}/`] = "";
        walk(path);
      } else files[rel] = read(path);
    }
  };
  walk(dir);
  return files;
}

function project(files: Record<string, string>): { dir: string; cleanup(): void } {
  const made = tempDir("arbeit-remove-");
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(made.dir, path, ".."), { recursive: true });
    writeFileSync(join(made.dir, path), text);
  }
  return made;
}

const actions = (result: CliResult) => result.json.data.files.map((file: any) => [file.path, file.action]);

async function roundTrip(target: string, files: Record<string, string>, ...flags: string[]): Promise<void> {
  const { dir, cleanup } = project(files);
  const before = snapshot(dir);
  const added = await setup(dir, target, ...flags);
  assert.equal(added.code, 0, added.stderr);
  assert.notDeepEqual(snapshot(dir), before, "setup changed nothing");
  const removed = await setup(dir, target, "--remove");
  assert.equal(removed.code, 0, removed.stderr);
  assert.deepEqual(snapshot(dir), before);
  cleanup();
}

const USER_SETTINGS = json({
  permissions: { allow: ["Bash(npm test)"] },
  hooks: {
    PostToolUse: [{ matcher: "Write|Edit", hooks: [{ type: "command", command: "npx prettier --write" }] }],
    Stop: [{ hooks: [{ type: "command", command: "echo bye" }] }],
  },
  env: { FOO: "1" },
});
const USER_MCP = json({ mcpServers: { github: { command: "gh-mcp", args: [], env: { TOKEN: "x" } } } });
const USER_NOTES = "# My project\n\nRun `make check` before committing.\n";

describe("arbeit setup claude --remove", () => {
  it("leaves a project that had none of the files without them", () => roundTrip("claude", {}));

  it("leaves the user's settings, servers and CLAUDE.md byte for byte as they were", () =>
    roundTrip("claude", {
      ".claude/settings.json": USER_SETTINGS,
      ".mcp.json": USER_MCP,
      "CLAUDE.md": USER_NOTES,
    }));

  it("restores a CLAUDE.md that did not end with a newline, and keeps other files of .claude/", () =>
    roundTrip("claude", { "CLAUDE.md": "No newline at the end", ".claude/commands/x.md": "hi\n" }));

  it("restores files that held only other hooks of the same events", () =>
    roundTrip("claude", {
      ".claude/settings.json": json({
        hooks: {
          SessionStart: [{ hooks: [{ type: "command", command: "echo hi" }] }],
          PreCompact: [{ hooks: [{ type: "command", command: "echo compacting" }] }],
          UserPromptSubmit: [{ hooks: [{ type: "command", command: "echo prompt" }] }],
          PostToolUseFailure: [{ matcher: "Bash", hooks: [{ type: "command", command: "echo failed" }] }],
          SubagentStop: [{ hooks: [{ type: "command", command: "echo sub-agent done" }] }],
          SessionEnd: [{ hooks: [{ type: "command", command: "echo bye" }] }],
        },
      }),
    }));

  it("keeps what the user wrote before and after the block, one blank line between", async () => {
    const { dir, cleanup } = project({ "CLAUDE.md": "Intro.\n" });
    await setup(dir, "claude", "--command", "arbeit");
    writeFileSync(join(dir, "CLAUDE.md"), `${read(join(dir, "CLAUDE.md"))}\nWritten later.\n`);
    const result = await setup(dir, "claude", "--remove");
    assert.equal(result.code, 0, result.stderr);
    assert.equal(read(join(dir, "CLAUDE.md")), "Intro.\n\nWritten later.\n");
    cleanup();
  });

  it("reports each file, keeps the database, and a second run is a no-op", async () => {
    const { dir, cleanup } = project({ ".mcp.json": USER_MCP, "CLAUDE.md": USER_NOTES });
    await setup(dir, "claude", "--command", "arbeit");
    const first = await setup(dir, "claude", "--remove");
    assert.equal(first.code, 0, first.stderr);
    const files = [".claude/settings.json", ".mcp.json", "CLAUDE.md"];
    assert.deepEqual(actions(first), [
      [files[0], "removed"],
      [files[1], "updated"],
      [files[2], "updated"],
    ]);
    assert.ok(existsSync(join(dir, ".arbeit", "arbeit.db")));
    assert.match(first.json.data.notes.join("\n"), /\.arbeit\/.*kept/);
    const after = snapshot(dir);
    const second = await setup(dir, "claude", "--remove");
    assert.equal(second.code, 0, second.stderr);
    assert.deepEqual(
      actions(second),
      files.map((file) => [file, "unchanged"]),
    );
    assert.deepEqual(snapshot(dir), after);
    cleanup();
  });

  it("takes out Arbeit's hooks however they run, keeping a user's hook that shares their group", async () => {
    const mine = { type: "command", command: "echo edited" };
    const { dir, cleanup } = project({
      ".claude/settings.json": json({
        hooks: {
          PostToolUse: [
            { matcher: "Edit", hooks: [mine, { type: "command", command: "npx arbeit hook post-tool-use" }] },
          ],
          SessionStart: [{ hooks: [{ type: "command", command: "/opt/x/dist/cli/main.js hook session-start" }] }],
        },
      }),
    });
    const result = await setup(dir, "claude", "--remove");
    assert.equal(result.code, 0, result.stderr);
    assert.equal(
      read(join(dir, ".claude", "settings.json")),
      json({ hooks: { PostToolUse: [{ matcher: "Edit", hooks: [mine] }] } }),
    );
    cleanup();
  });

  it("never deletes a file it did not create, even one that held only Arbeit's entries", async () => {
    const ours = json({
      hooks: { SessionEnd: [{ hooks: [{ type: "command", command: "npx arbeit hook session-end" }] }] },
    });
    const { dir, cleanup } = project({
      ".claude/settings.json": ours,
      ".mcp.json": json({ mcpServers: { arbeit: { command: "npx", args: ["--no-install", "arbeit", "mcp"] } } }),
      "CLAUDE.md": "",
    });
    assert.equal((await setup(dir, "claude")).code, 0);
    const result = await setup(dir, "claude", "--remove");
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(actions(result), [
      [".claude/settings.json", "updated"],
      [".mcp.json", "updated"],
      ["CLAUDE.md", "updated"],
    ]);
    assert.equal(read(join(dir, ".claude", "settings.json")), json({}));
    assert.equal(read(join(dir, ".mcp.json")), json({}));
    assert.equal(read(join(dir, "CLAUDE.md")), "");
    cleanup();
  });

  it("takes out hooks and a server written with --command when given the same --command", async () => {
    const { dir, cleanup } = project({});
    assert.equal((await setup(dir, "claude", "--command", "node ./tools/arb.js")).code, 0);
    const kept = await setup(dir, "claude", "--remove");
    assert.deepEqual(actions(kept).slice(0, 2), [
      [".claude/settings.json", "unchanged"],
      [".mcp.json", "unchanged"],
    ]);
    const removed = await setup(dir, "claude", "--remove", "--command", "node ./tools/arb.js");
    assert.deepEqual(actions(removed), [
      [".claude/settings.json", "removed"],
      [".mcp.json", "removed"],
      ["CLAUDE.md", "unchanged"],
    ]);
    assert.equal(existsSync(join(dir, ".claude")), false);
    cleanup();
  });

  it("refuses a file that is not valid JSON, touching no file", async () => {
    const { dir, cleanup } = project({ "CLAUDE.md": USER_NOTES });
    await setup(dir, "claude", "--command", "arbeit");
    writeFileSync(join(dir, ".mcp.json"), "{ nope");
    const withBlock = read(join(dir, "CLAUDE.md"));
    const result = await setup(dir, "claude", "--remove");
    assert.equal(result.code, 1);
    assert.match(result.stderr, /\.mcp\.json is not valid JSON/);
    assert.equal(read(join(dir, "CLAUDE.md")), withBlock);
    cleanup();
  });
});

describe("arbeit setup opencode --remove", () => {
  const PLUGIN = ".opencode/plugin/arbeit.js";

  it("leaves a project that had none of the files without them", () => roundTrip("opencode", {}));

  it("leaves AGENTS.md and other plugin files as they were", () =>
    roundTrip("opencode", { "AGENTS.md": USER_NOTES, ".opencode/plugin/mine.js": "export default {};\n" }));

  it("--npm: leaves opencode.json with its other plugins as it was", () =>
    roundTrip(
      "opencode",
      { "opencode.json": json({ $schema: "https://opencode.ai/config.json", plugin: ["other-plugin"], model: "x/y" }) },
      "--npm",
    ));

  it("--npm: deletes the opencode.json it created", () => roundTrip("opencode", {}, "--npm"));

  it("removes a plugin file importing the project's arbeit, and a pinned npm entry", async () => {
    const { dir, cleanup } = project({ "opencode.json": json({ plugin: [["arbeit@0.1.0", { list: "web" }], "x"] }) });
    mkdirSync(join(dir, "node_modules"));
    symlinkSync(REPO, join(dir, "node_modules", "arbeit"), "dir");
    await setup(dir, "opencode");
    const result = await setup(dir, "opencode", "--remove");
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(actions(result), [
      [PLUGIN, "removed"],
      ["opencode.json", "updated"],
      ["AGENTS.md", "removed"],
    ]);
    assert.equal(read(join(dir, "opencode.json")), json({ plugin: ["x"] }));
    assert.equal(existsSync(join(dir, ".opencode")), false);
    cleanup();
  });

  it("keeps a plugin file that is not the one setup writes, and says so; --force removes it", async () => {
    const mine = "export default { id: 'mine', server: async () => ({}) };\n";
    const { dir, cleanup } = project({ [PLUGIN]: mine });
    const kept = await setup(dir, "opencode", "--remove");
    assert.equal(kept.code, 0, kept.stderr);
    assert.deepEqual(actions(kept)[0], [PLUGIN, "unchanged"]);
    assert.match(
      kept.json.data.notes.join("\n"),
      /arbeit\.js is not the file setup writes, so it is taken as yours and was kept/,
    );
    assert.equal(read(join(dir, PLUGIN)), mine);
    const forced = await setup(dir, "opencode", "--remove", "--force");
    assert.deepEqual(actions(forced)[0], [PLUGIN, "removed"]);
    assert.equal(existsSync(join(dir, PLUGIN)), false);
    cleanup();
  });

  it("--remove takes no --npm and setup claude no --force, but takes --command", async () => {
    const { dir, cleanup } = project({});
    assert.equal((await setup(dir, "opencode", "--remove")).code, 0);
    assert.equal((await setup(dir, "opencode", "--remove", "--npm")).code, 2);
    assert.equal((await setup(dir, "claude", "--remove", "--force")).code, 2);
    assert.equal((await setup(dir, "claude", "--remove", "--command", "x")).code, 0);
    cleanup();
  });
});
