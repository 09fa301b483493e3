import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CLI, type CliResult, runCli } from "../helpers/cli.js";
import { installArbeitInto } from "../helpers/install.js";
import { tempDir } from "../helpers/temp.js";

/** `arbeit setup claude | opencode` against real project folders, through the built CLI. */

const REPO = fileURLToPath(new URL("../../", import.meta.url));
/** This checkout's CLI, which setup writes when the project has no Arbeit of its own. */
const INSTALLED = realpathSync(CLI);
/** A hook command setup writes: silent when its program is missing. */
const guarded = (program: string, name: string) => `[ ! -x ${program} ] || ${program} hook ${name}`;
const PROJECT_BIN = '"$CLAUDE_PROJECT_DIR"/node_modules/.bin/arbeit';
/** The MCP server of a project with its own copy, as setup writes it into .mcp.json. */
const PROJECT_MCP = { command: "sh", args: ["-c", `exec ${PROJECT_BIN} mcp`] };

/** A hook command run as Claude Code runs it: `sh -c`, with the project in CLAUDE_PROJECT_DIR. */
function runHook(command: string, cwd: string, projectDir: string, payload = "{}") {
  return spawnSync("sh", ["-c", command], {
    cwd,
    input: payload,
    encoding: "utf8",
    env: { PATH: process.env.PATH, CLAUDE_PROJECT_DIR: projectDir },
  });
}

function setup(dir: string, ...args: string[]): Promise<CliResult> {
  return runCli(["setup", ...args, "--json"], { cwd: dir });
}

const read = (path: string) => readFileSync(path, "utf8");
const readJson = (path: string) => JSON.parse(read(path));

function writeJson(path: string, value: unknown): void {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}

function project(): { dir: string; cleanup(): void } {
  return tempDir("arbeit-setup-");
}

describe("arbeit setup claude", () => {
  it("without arbeit in the project, hooks and the MCP server run this installation by absolute path, and say so", async () => {
    const { dir, cleanup } = project();
    const result = await setup(dir, "claude");
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(
      result.json.data.files.map((f: any) => [f.path, f.action]),
      [
        [".claude/settings.json", "created"],
        [".mcp.json", "created"],
        ["CLAUDE.md", "created"],
        [".arbeit/arbeit.db", "created"],
      ],
    );
    const { hooks } = readJson(join(dir, ".claude", "settings.json"));
    assert.deepEqual(hooks.SessionStart, [
      {
        matcher: "startup|resume|clear|compact",
        hooks: [{ type: "command", command: guarded(INSTALLED, "session-start"), timeout: 10 }],
      },
    ]);
    assert.equal(
      hooks.PostToolUse[0].matcher,
      "Read|Write|Edit|MultiEdit|NotebookEdit|Bash|TaskCreate|TaskUpdate|TodoWrite|ExitPlanMode",
    );
    assert.equal(hooks.PostToolUse[0].hooks[0].command, guarded(INSTALLED, "post-tool-use"));
    assert.equal(hooks.PreCompact[0].hooks[0].command, guarded(INSTALLED, "pre-compact"));
    // One hook per event; only the tool events and SessionStart are narrowed by a matcher.
    assert.deepEqual(
      Object.entries(hooks).map(([event, groups]: [string, any]) => [
        event,
        groups[0].matcher,
        groups[0].hooks[0].command,
      ]),
      [
        ["SessionStart", "startup|resume|clear|compact", guarded(INSTALLED, "session-start")],
        ["UserPromptSubmit", undefined, guarded(INSTALLED, "user-prompt-submit")],
        ["PreToolUse", "mcp__arbeit__.*|Write|Edit|MultiEdit|NotebookEdit|Bash", guarded(INSTALLED, "pre-tool-use")],
        [
          "PostToolUse",
          "Read|Write|Edit|MultiEdit|NotebookEdit|Bash|TaskCreate|TaskUpdate|TodoWrite|ExitPlanMode",
          guarded(INSTALLED, "post-tool-use"),
        ],
        ["PostToolUseFailure", undefined, guarded(INSTALLED, "post-tool-use-failure")],
        ["TaskCreated", undefined, guarded(INSTALLED, "task-created")],
        ["TaskCompleted", undefined, guarded(INSTALLED, "task-completed")],
        ["SubagentStart", undefined, guarded(INSTALLED, "subagent-start")],
        ["SubagentStop", undefined, guarded(INSTALLED, "subagent-stop")],
        ["PreCompact", undefined, guarded(INSTALLED, "pre-compact")],
        ["PostCompact", undefined, guarded(INSTALLED, "post-compact")],
        ["SessionEnd", undefined, guarded(INSTALLED, "session-end")],
      ],
    );
    assert.deepEqual(readJson(join(dir, ".mcp.json")), {
      mcpServers: { arbeit: { command: INSTALLED, args: ["mcp"] } },
    });
    assert.match(
      result.json.data.notes[0],
      /not installed in this project.*npm install --save-dev <path to an Arbeit checkout or its packed tarball>/,
    );
    assert.ok(existsSync(join(dir, ".arbeit", "arbeit.db")));
    // The command runs as Claude Code would run it: through a shell, from a subfolder.
    mkdirSync(join(dir, "src"));
    const start = JSON.stringify({ hook_event_name: "SessionStart", session_id: "s-1", cwd: dir, source: "startup" });
    const hook = runHook(hooks.SessionStart[0].hooks[0].command, join(dir, "src"), dir, start);
    assert.equal(hook.status, 0, hook.stderr);
    // Arbeit answered, not just some program that exits 0.
    assert.equal(JSON.parse(hook.stdout).hookSpecificOutput.hookEventName, "SessionStart");
    cleanup();
  });

  it("with arbeit installed in the project, writes portable commands that run the project's copy from any folder", async () => {
    const { dir, cleanup } = project();
    installArbeitInto(dir);
    const result = await setup(dir, "claude");
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(result.json.data.notes, []);
    const { hooks } = readJson(join(dir, ".claude", "settings.json"));
    const command = hooks.PostToolUse[0].hooks[0].command;
    assert.equal(command, guarded(PROJECT_BIN, "post-tool-use"));
    assert.deepEqual(readJson(join(dir, ".mcp.json")).mcpServers.arbeit, PROJECT_MCP);
    mkdirSync(join(dir, "src"));
    const payload = {
      hook_event_name: "PostToolUse",
      session_id: "s-1",
      cwd: dir,
      tool_name: "Read",
      tool_input: { file_path: join(dir, "a.ts") },
    };
    const hook = runHook(command, join(dir, "src"), dir, JSON.stringify(payload));
    assert.equal(hook.status, 0, hook.stderr);
    const start = JSON.stringify({ hook_event_name: "SessionStart", session_id: "s-1", cwd: dir, source: "startup" });
    const briefed = runHook(hooks.SessionStart[0].hooks[0].command, join(dir, "src"), dir, start);
    assert.equal(JSON.parse(briefed.stdout).hookSpecificOutput.hookEventName, "SessionStart", briefed.stderr);
    // The server as Claude Code starts it: the command of .mcp.json, with CLAUDE_PROJECT_DIR set,
    // from a subfolder; it answers tools/list with Arbeit's tools.
    const { command: program, args } = readJson(join(dir, ".mcp.json")).mcpServers.arbeit;
    const client = new Client({ name: "setup-test", version: "1.0.0" });
    await client.connect(
      new StdioClientTransport({
        command: program,
        args,
        cwd: join(dir, "src"),
        env: { PATH: process.env.PATH ?? "", CLAUDE_PROJECT_DIR: dir },
      }),
    );
    const { tools } = await client.listTools();
    await client.close();
    assert.ok(tools.some((tool) => tool.name === "arbeit_resume"));
    cleanup();
  });

  it("points Arbeit's existing hooks and server at the new command, keeping their other keys", async () => {
    const { dir, cleanup } = project();
    const settingsPath = join(dir, ".claude", "settings.json");
    writeJson(settingsPath, {
      hooks: {
        PostToolUse: [
          { matcher: "Edit", hooks: [{ type: "command", command: "npx arbeit hook post-tool-use", timeout: 5 }] },
        ],
      },
    });
    writeJson(join(dir, ".mcp.json"), {
      mcpServers: { arbeit: { command: "npx", args: ["arbeit", "mcp"], env: { A: "1" } } },
    });
    const result = await setup(dir, "claude", "--command", "arbeit");
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(
      result.json.data.files.slice(0, 2).map((f: any) => [f.action, f.detail]),
      [
        [
          "updated",
          "hooks: SessionStart, UserPromptSubmit, PreToolUse, PostToolUseFailure, TaskCreated, TaskCompleted, SubagentStart, SubagentStop, PreCompact, PostCompact, SessionEnd; now running arbeit: PostToolUse",
        ],
        ["updated", "MCP server arbeit now running arbeit"],
      ],
    );
    const { hooks } = readJson(settingsPath);
    assert.deepEqual(hooks.PostToolUse, [
      { matcher: "Edit", hooks: [{ type: "command", command: "arbeit hook post-tool-use", timeout: 5 }] },
    ]);
    assert.deepEqual(readJson(join(dir, ".mcp.json")).mcpServers.arbeit, {
      command: "arbeit",
      args: ["mcp"],
      env: { A: "1" },
    });
    cleanup();
  });

  it("widens the PostToolUse matchers older setups wrote to take in Bash and the task and plan tools; a matcher of the user's stays", async () => {
    const { dir, cleanup } = project();
    const settingsPath = join(dir, ".claude", "settings.json");
    const ours = { type: "command", command: guarded(INSTALLED, "post-tool-use"), timeout: 10 };
    const current = "Read|Write|Edit|MultiEdit|NotebookEdit|Bash|TaskCreate|TaskUpdate|TodoWrite|ExitPlanMode";
    for (const older of ["Read|Write|Edit|MultiEdit|NotebookEdit", "Read|Write|Edit|MultiEdit|NotebookEdit|Bash"]) {
      writeJson(settingsPath, { hooks: { PostToolUse: [{ matcher: older, hooks: [ours] }] } });
      assert.equal((await setup(dir, "claude")).code, 0);
      assert.deepEqual(readJson(settingsPath).hooks.PostToolUse, [{ matcher: current, hooks: [ours] }]);
    }
    writeJson(settingsPath, { hooks: { PostToolUse: [{ matcher: "Edit", hooks: [ours] }] } });
    assert.equal((await setup(dir, "claude")).code, 0);
    assert.deepEqual(readJson(settingsPath).hooks.PostToolUse, [{ matcher: "Edit", hooks: [ours] }]);
    cleanup();
  });

  it("widens the PreToolUse matcher an older setup wrote (Arbeit's MCP tools) to take in the file tools and Bash", async () => {
    const { dir, cleanup } = project();
    const settingsPath = join(dir, ".claude", "settings.json");
    const ours = { type: "command", command: guarded(INSTALLED, "pre-tool-use"), timeout: 10 };
    writeJson(settingsPath, { hooks: { PreToolUse: [{ matcher: "mcp__arbeit__.*", hooks: [ours] }] } });
    assert.equal((await setup(dir, "claude")).code, 0);
    assert.deepEqual(readJson(settingsPath).hooks.PreToolUse, [
      { matcher: "mcp__arbeit__.*|Write|Edit|MultiEdit|NotebookEdit|Bash", hooks: [ours] },
    ]);
    cleanup();
  });

  it("merges into existing files, keeping every key, hook and server, and is idempotent", async () => {
    const { dir, cleanup } = project();
    const settingsPath = join(dir, ".claude", "settings.json");
    const mcpPath = join(dir, ".mcp.json");
    const prettier = { matcher: "Write|Edit", hooks: [{ type: "command", command: "npx prettier --write" }] };
    const greet = { hooks: [{ type: "command", command: "echo hello" }] };
    const settings = {
      permissions: { allow: ["Bash(npm test)"] },
      env: { FOO: "1" },
      hooks: { PostToolUse: [prettier], SessionStart: [greet], Stop: [greet] },
    };
    writeJson(settingsPath, settings);
    const mcp = { mcpServers: { github: { command: "gh-mcp", args: [], env: { TOKEN: "x" } } }, other: true };
    writeJson(mcpPath, mcp);

    const first = await setup(dir, "claude");
    assert.equal(first.code, 0, first.stderr);
    const merged = readJson(settingsPath);
    assert.deepEqual(merged.permissions, settings.permissions);
    assert.deepEqual(merged.env, settings.env);
    assert.deepEqual(merged.hooks.Stop, [greet]);
    assert.deepEqual(merged.hooks.PostToolUse[0], prettier);
    assert.equal(merged.hooks.PostToolUse[1].hooks[0].command, guarded(INSTALLED, "post-tool-use"));
    assert.deepEqual(merged.hooks.SessionStart[0], greet);
    assert.equal(merged.hooks.SessionStart[1].hooks[0].command, guarded(INSTALLED, "session-start"));
    assert.equal(merged.hooks.PreCompact.length, 1);
    const mergedMcp = readJson(mcpPath);
    assert.deepEqual(mergedMcp.mcpServers.github, mcp.mcpServers.github);
    assert.equal(mergedMcp.other, true);
    assert.deepEqual(mergedMcp.mcpServers.arbeit, { command: INSTALLED, args: ["mcp"] });

    const settingsText = read(settingsPath);
    const mcpText = read(mcpPath);
    const second = await setup(dir, "claude");
    assert.equal(second.code, 0, second.stderr);
    assert.deepEqual(
      second.json.data.files.map((f: any) => f.action),
      ["unchanged", "unchanged", "unchanged"],
    );
    assert.equal(read(settingsPath), settingsText);
    assert.equal(read(mcpPath), mcpText);
    cleanup();
  });

  it("recognises Arbeit hooks and server configured another way and adds no second copy", async () => {
    const { dir, cleanup } = project();
    const settingsPath = join(dir, ".claude", "settings.json");
    writeJson(settingsPath, {
      hooks: { PostToolUse: [{ matcher: "Edit", hooks: [{ type: "command", command: "arbeit hook post-tool-use" }] }] },
    });
    writeJson(join(dir, ".mcp.json"), { mcpServers: { arbeit: { command: "arbeit", args: ["mcp"] } } });
    const result = await setup(dir, "claude", "--command", "arbeit");
    assert.equal(result.code, 0, result.stderr);
    const { hooks } = readJson(settingsPath);
    assert.equal(hooks.PostToolUse.length, 1);
    assert.equal(hooks.SessionStart[0].hooks[0].command, "arbeit hook session-start");
    assert.deepEqual(readJson(join(dir, ".mcp.json")).mcpServers.arbeit, { command: "arbeit", args: ["mcp"] });
    cleanup();
  });

  it("runs the MCP server with the same --command as the hooks", async () => {
    const { dir, cleanup } = project();
    const result = await setup(dir, "claude", "--command", "/opt/arbeit/bin/arbeit");
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(readJson(join(dir, ".mcp.json")).mcpServers.arbeit, {
      command: "/opt/arbeit/bin/arbeit",
      args: ["mcp"],
    });
    const { hooks } = readJson(join(dir, ".claude", "settings.json"));
    assert.equal(hooks.PreToolUse[0].matcher, "mcp__arbeit__.*|Write|Edit|MultiEdit|NotebookEdit|Bash");
    assert.equal(hooks.PreToolUse[0].hooks[0].command, "/opt/arbeit/bin/arbeit hook pre-tool-use");
    cleanup();
  });

  it("refuses a settings file that is not valid JSON, touching no file", async () => {
    const { dir, cleanup } = project();
    const settingsPath = join(dir, ".claude", "settings.json");
    mkdirSync(join(dir, ".claude"));
    writeFileSync(settingsPath, '{ "hooks": { // a comment\n} }\n');
    const result = await setup(dir, "claude");
    assert.equal(result.code, 1);
    assert.match(result.stderr, /settings\.json is not valid JSON/);
    assert.equal(read(settingsPath), '{ "hooks": { // a comment\n} }\n');
    assert.equal(existsSync(join(dir, ".mcp.json")), false);
    assert.equal(existsSync(join(dir, "CLAUDE.md")), false);
    assert.equal(existsSync(join(dir, ".arbeit")), false);
    cleanup();
  });

  it("refuses an invalid .mcp.json and settings whose hooks are not shaped as documented", async () => {
    const { dir, cleanup } = project();
    writeFileSync(join(dir, ".mcp.json"), "[1, 2");
    const bad = await setup(dir, "claude");
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /\.mcp\.json is not valid JSON/);
    assert.equal(existsSync(join(dir, ".claude", "settings.json")), false);

    writeFileSync(join(dir, ".mcp.json"), "{}");
    writeJson(join(dir, ".claude", "settings.json"), { hooks: { PostToolUse: { matcher: "Edit" } } });
    const shape = await setup(dir, "claude");
    assert.equal(shape.code, 1);
    assert.match(shape.stderr, /"hooks\.PostToolUse" in \.claude\/settings\.json must be an array/);
    assert.equal(read(join(dir, ".mcp.json")), "{}");
    cleanup();
  });
});

describe("arbeit setup claude touches only what is Arbeit's", () => {
  it("keeps a user's hooks that merely end in `hook <event>`, and an arbeit server of the user's; --remove keeps them too", async () => {
    const { dir, cleanup } = project();
    installArbeitInto(dir);
    const settingsPath = join(dir, ".claude", "settings.json");
    const mcpPath = join(dir, ".mcp.json");
    const lookAlikes = {
      hooks: {
        SessionStart: [{ hooks: [{ type: "command", command: "node tools/domain.js hook session-start" }] }],
        PostToolUse: [
          {
            matcher: "Bash",
            hooks: [
              { type: "command", command: "my-wrapper arbeit hook post-tool-use" },
              { type: "command", command: "/opt/tools/dist/cli/main.js hook post-tool-use" },
            ],
          },
        ],
      },
    };
    // /opt/tools/dist/cli/main.js exists and is not Arbeit: a tool of the user's by that layout.
    mkdirSync(join(dir, "opt", "dist", "cli"), { recursive: true });
    writeFileSync(join(dir, "opt", "package.json"), '{"name": "domain-tools"}\n');
    writeFileSync(join(dir, "opt", "dist", "cli", "main.js"), "");
    lookAlikes.hooks.PostToolUse[0]!.hooks[1]!.command =
      `${join(dir, "opt", "dist", "cli", "main.js")} hook post-tool-use`;
    writeJson(settingsPath, lookAlikes);
    const remote = { type: "http", url: "https://arbeit.example.com/mcp" };
    writeJson(mcpPath, { mcpServers: { arbeit: remote } });
    const mcpBefore = read(mcpPath);

    const result = await setup(dir, "claude");
    assert.equal(result.code, 0, result.stderr);
    const { hooks } = readJson(settingsPath);
    assert.deepEqual(hooks.SessionStart[0], lookAlikes.hooks.SessionStart[0]);
    assert.deepEqual(hooks.SessionStart[1].hooks[0].command, guarded(PROJECT_BIN, "session-start"));
    assert.deepEqual(hooks.PostToolUse[0], lookAlikes.hooks.PostToolUse[0]);
    assert.deepEqual(hooks.PostToolUse[1].hooks[0].command, guarded(PROJECT_BIN, "post-tool-use"));
    assert.equal(read(mcpPath), mcpBefore);
    assert.deepEqual(result.json.data.files[1], {
      path: ".mcp.json",
      action: "unchanged",
      detail: "an MCP server arbeit of your own",
    });
    assert.match(result.json.data.notes.join("\n"), /`arbeit` server setup did not write; it was kept/);

    const removed = await setup(dir, "claude", "--remove");
    assert.equal(removed.code, 0, removed.stderr);
    assert.equal(read(settingsPath), `${JSON.stringify(lookAlikes, null, 2)}\n`);
    assert.equal(read(mcpPath), mcpBefore);
    cleanup();
  });

  it("brings hooks and the server an older setup wrote for the project's copy up to the current commands", async () => {
    const { dir, cleanup } = project();
    installArbeitInto(dir);
    const settingsPath = join(dir, ".claude", "settings.json");
    const older = `${PROJECT_BIN} hook session-start`;
    writeJson(settingsPath, { hooks: { SessionStart: [{ hooks: [{ type: "command", command: older }] }] } });
    writeJson(join(dir, ".mcp.json"), {
      mcpServers: { arbeit: { command: "npx", args: ["--no-install", "arbeit", "mcp"] } },
    });
    const result = await setup(dir, "claude");
    assert.equal(result.code, 0, result.stderr);
    const { hooks } = readJson(settingsPath);
    assert.deepEqual(hooks.SessionStart, [
      { hooks: [{ type: "command", command: guarded(PROJECT_BIN, "session-start") }] },
    ]);
    assert.deepEqual(readJson(join(dir, ".mcp.json")).mcpServers.arbeit, PROJECT_MCP);
    cleanup();
  });

  it("status names the missing program of a guarded hook, which Claude Code no longer shows failing", async () => {
    const { dir: parent, cleanup } = project();
    const dir = join(parent, "app");
    mkdirSync(dir);
    assert.equal((await setup(dir, "claude")).code, 0);
    const settingsPath = join(dir, ".claude", "settings.json");
    const gone = join(parent, "gone install", "dist", "cli", "main.js");
    writeFileSync(settingsPath, read(settingsPath).replaceAll(INSTALLED, `'${gone}'`));
    const status = await runCli(["status", "--json"], { cwd: dir });
    const missing = status.json.attention.filter((item: any) => item.code === "HOST_COMMAND_MISSING");
    assert.deepEqual(
      missing.map((item: any) => item.message),
      [`Claude Code runs ${gone}, which does not exist (moved or uninstalled since setup wrote it).`],
    );
    cleanup();
  });

  it("a hook setup wrote exits 0 silently where its program is missing (a teammate without Arbeit), also in a folder with spaces", async () => {
    const { dir: parent, cleanup } = project();
    const dir = join(parent, "my app");
    mkdirSync(dir);
    installArbeitInto(dir);
    assert.equal((await setup(dir, "claude")).code, 0);
    const { hooks } = readJson(join(dir, ".claude", "settings.json"));
    const start = JSON.stringify({ hook_event_name: "SessionStart", session_id: "s-1", cwd: dir, source: "startup" });
    const briefed = runHook(hooks.SessionStart[0].hooks[0].command, dir, dir, start);
    assert.equal(JSON.parse(briefed.stdout).hookSpecificOutput.hookEventName, "SessionStart", briefed.stderr);
    // The teammate's clone: the committed settings, no node_modules.
    rmSync(join(dir, "node_modules"), { recursive: true });
    for (const [event, groups] of Object.entries(hooks) as [string, any][]) {
      const hook = runHook(groups[0].hooks[0].command, dir, dir, JSON.stringify({ hook_event_name: event }));
      assert.deepEqual([event, hook.status, hook.stdout, hook.stderr], [event, 0, "", ""]);
    }
    // Without setup's own installation too: the absolute path it writes when the project has none.
    const { dir: other, cleanup: cleanupOther } = project();
    assert.equal((await setup(other, "claude")).code, 0);
    const command = readJson(join(other, ".claude", "settings.json")).hooks.PostToolUse[0].hooks[0].command;
    const moved = command.replaceAll(INSTALLED, join(parent, "gone", "dist", "cli", "main.js"));
    const hook = runHook(moved, other, other, "{}");
    assert.deepEqual([hook.status, hook.stdout, hook.stderr], [0, "", ""]);
    cleanupOther();
    cleanup();
  });
});

describe("arbeit setup opencode", () => {
  const pluginPath = (dir: string) => join(dir, ".opencode", "plugin", "arbeit.js");

  it("writes a plugin file importing arbeit/opencode when the project has arbeit installed", async () => {
    const { dir, cleanup } = project();
    mkdirSync(join(dir, "node_modules"));
    symlinkSync(REPO, join(dir, "node_modules", "arbeit"), "dir");
    const result = await setup(dir, "opencode");
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(result.json.data.notes, []);
    assert.match(read(pluginPath(dir)), /^export \{ default \} from "arbeit\/opencode";$/m);
    const again = await setup(dir, "opencode");
    assert.equal(again.json.data.files[0].action, "unchanged");
    cleanup();
  });

  it("imports this installation by path when the project cannot resolve arbeit, and says so; once installed, setup switches to the package", async () => {
    const { dir, cleanup } = project();
    const result = await setup(dir, "opencode");
    assert.equal(result.code, 0, result.stderr);
    const source = read(pluginPath(dir));
    const specifier = /from "(.*)";/.exec(source)![1]!;
    assert.equal(fileURLToPath(specifier), join(REPO, "dist", "opencode", "server.js"));
    assert.match(result.json.data.notes[0], /not installed in this project.*`arbeit setup opencode` again/);
    assert.doesNotMatch(result.json.data.notes[0], /--force/);
    installArbeitInto(dir);
    const again = await setup(dir, "opencode");
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.json.data.files[0].action, "updated");
    assert.match(read(pluginPath(dir)), /^export \{ default \} from "arbeit\/opencode";$/m);
    cleanup();
  });

  it("refuses to replace a plugin file of the user's, suggesting no --force, unless --force is given", async () => {
    const { dir, cleanup } = project();
    mkdirSync(join(dir, ".opencode", "plugin"), { recursive: true });
    writeFileSync(pluginPath(dir), "export default { id: 'mine', server: async () => ({}) };\n");
    const refused = await setup(dir, "opencode");
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /exists and is not the file setup writes; it was left as it is/);
    assert.doesNotMatch(refused.stderr, /--force/);
    assert.match(read(pluginPath(dir)), /mine/);
    const forced = await setup(dir, "opencode", "--force");
    assert.equal(forced.code, 0, forced.stderr);
    assert.equal(forced.json.data.files[0].action, "updated");
    assert.match(read(pluginPath(dir)), /export \{ default \} from/);
    cleanup();
  });

  it("--npm lists the package in opencode.json, keeping everything else, once", async () => {
    const { dir, cleanup } = project();
    const configPath = join(dir, "opencode.json");
    const config = { $schema: "https://opencode.ai/config.json", model: "x/y", plugin: ["other-plugin"], mcp: {} };
    writeJson(configPath, config);
    const first = await setup(dir, "opencode", "--npm");
    assert.equal(first.code, 0, first.stderr);
    assert.deepEqual(readJson(configPath), { ...config, plugin: ["other-plugin", "arbeit"] });
    assert.equal(existsSync(pluginPath(dir)), false);
    const text = read(configPath);
    const second = await setup(dir, "opencode", "--npm");
    assert.equal(second.json.data.files[0].action, "unchanged");
    assert.equal(read(configPath), text);

    writeJson(configPath, { plugin: [["arbeit@0.1.0", { list: "web" }]] });
    const pinned = await setup(dir, "opencode", "--npm");
    assert.equal(pinned.json.data.files[0].action, "unchanged");
    cleanup();
  });

  it("--npm creates opencode.json when there is none and refuses one that is not JSON", async () => {
    const { dir, cleanup } = project();
    const created = await setup(dir, "opencode", "--npm");
    assert.equal(created.code, 0, created.stderr);
    assert.deepEqual(readJson(join(dir, "opencode.json")), {
      $schema: "https://opencode.ai/config.json",
      plugin: ["arbeit"],
    });
    writeFileSync(join(dir, "opencode.json"), "{ plugin: [] }");
    const refused = await setup(dir, "opencode", "--npm");
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /opencode\.json is not valid JSON/);
    assert.equal(read(join(dir, "opencode.json")), "{ plugin: [] }");
    cleanup();
  });

  it("usage errors exit 2", async () => {
    const { dir, cleanup } = project();
    assert.equal((await setup(dir, "vscode")).code, 2);
    assert.equal((await setup(dir, "opencode", "--command", "x")).code, 2);
    cleanup();
  });
});
