import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { ARBEIT_SETTINGS, CLI, runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";

/**
 * `arbeit` starts light: main.ts loads only the option parser and the command table; zod, the
 * tool catalogue and the database driver are imported when a command needs them. This follows
 * the static (non-type) imports from main.ts and lists every module that start-up loads.
 */
const CLI_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "../../src/cli");
const STATIC_IMPORT = /^import\s+(?!type\b)[^;]*?from\s+"([^"]+)";/gms;

function staticImports(file: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file)) return seen;
  seen.add(file);
  for (const [, specifier] of readFileSync(file, "utf8").matchAll(STATIC_IMPORT)) {
    if (specifier!.startsWith(".")) staticImports(join(dirname(file), specifier!.replace(/\.js$/, ".ts")), seen);
    else seen.add(specifier!);
  }
  return seen;
}

describe("start-up", () => {
  it("loads neither zod, the catalogue, the service nor a database driver before a command runs", () => {
    const loaded = [...staticImports(join(CLI_DIR, "main.ts"))];
    for (const module of loaded) {
      assert.doesNotMatch(
        module,
        /^(zod|better-sqlite3|bun:sqlite|@modelcontextprotocol\/)/,
        `main.ts loads ${module}`,
      );
      assert.doesNotMatch(module, /\/(tools|service|store)\//, `main.ts loads ${module}`);
    }
    assert.ok(loaded.some((module) => module.endsWith("global-options.ts")));
  });

  it("the PreToolUse hook's quick path loads neither the full hooks, the service nor the store around the file", () => {
    // `arbeit hook` itself: the hooks' code loads when a hook needs it.
    const hook = [...staticImports(join(CLI_DIR, "hook-command.ts"))];
    for (const module of hook)
      assert.doesNotMatch(module, /\/(tools|service|store|remote)\/|\/claude\/hooks\.ts$/, module);
    // Claude Code runs it before every file tool: the store file read directly, by the store's own statements.
    const quick = [...staticImports(join(CLI_DIR, "../claude/pre-tool-use.ts"))];
    for (const module of quick) {
      assert.doesNotMatch(
        module,
        /^(zod|pg|better-sqlite3|@modelcontextprotocol\/|node:(child_process|net|http|stream|crypto))/,
        module,
      );
      assert.doesNotMatch(module, /\/(tools|fragments|postgres)\//, module);
      assert.doesNotMatch(
        module,
        /\/(claude\/(hooks|hook-steps)|store\/sqlite\/sqlite-task-store|store\/sql\/sql-tx|store\/task-store)\.ts$/,
        module,
      );
      // From the service only what finds the store and reads a shell line: the Bash check reads the
      // command as a shell does and asks git what a commit would carry (git loads only then).
      if (module.includes("/service/"))
        assert.match(module, /\/service\/(locate|resolve-path|shell-commands|git-commit)\.ts$/, module);
    }
    assert.ok(
      quick.some((module) => module.endsWith("/domain/reservations.ts")),
      "the one matching rule",
    );
    assert.ok(
      quick.some((module) => module.endsWith("/store/sql/reservations.ts")),
      "the store's own lookup",
    );
  });

  it("leaves the dashboard's server out of the bundle every other command starts from", () => {
    // npm test builds dist/ first; `arbeit ui` loads its server from the full bundle only.
    const core = readFileSync(join(CLI_DIR, "../../dist/cli/arbeit-core.cjs"), "utf8");
    const full = readFileSync(join(CLI_DIR, "../../dist/cli/arbeit.cjs"), "utf8");
    assert.ok(full.includes("FORBIDDEN_HOST"), "the full bundle serves the dashboard");
    assert.ok(!core.includes("FORBIDDEN_HOST"), "the core bundle carries the dashboard's server");
  });
});

/**
 * What one call of the built CLI loads, as the process saw it (test/helpers/load-recorder.cjs):
 * the bundles its loader compiled, the Node built-ins it loaded beyond a bare `node`, and the
 * zod schemas it built with a description. Every call below starts in the lean core bundle and
 * stays there; the full bundle holds the dashboard's server and the MCP SDK.
 */
describe("what one CLI call loads", () => {
  const RECORDER = fileURLToPath(new URL("../helpers/load-recorder.cjs", import.meta.url));
  // Built-ins whose loading costs a call milliseconds and that none of these commands needs:
  // streams (process.stdout, node:crypto), the network and terminal stacks, child processes.
  const HEAVY_BUILTINS =
    /^(crypto|stream|net|http|https|http2|tls|tty|dgram|child_process|readline|zlib|worker_threads|internal\/streams\/)/;
  let dir: string;
  let cleanup: () => void;
  let taskId: string;

  before(async () => {
    ({ dir, cleanup } = tempDir("arbeit-startup-"));
    assert.equal((await runCli(["init"], { cwd: dir })).code, 0);
    taskId = (await runCli(["task", "create", "Measure start-up", "--json"], { cwd: dir })).json.data.task.id;
    assert.equal((await runCli(["task", "create", "A second page"], { cwd: dir })).code, 0);
  });
  after(() => cleanup());

  function loads(...args: string[]): { bundles: string[]; builtins: string[]; described: string[] } {
    const record = join(dir, "load-record.json");
    const env: NodeJS.ProcessEnv = { ...process.env, ARBEIT_LOAD_RECORD: record };
    for (const key of ARBEIT_SETTINGS) delete env[key];
    const result = spawnSync(process.execPath, ["-r", RECORDER, CLI, ...args], { cwd: dir, env, encoding: "utf8" });
    assert.equal(result.status, 0, `arbeit ${args.join(" ")}: ${result.stderr}${result.stdout}`);
    return JSON.parse(readFileSync(record, "utf8"));
  }

  /** Every description in a tool's input schema, as `arbeit tools --json` lists it. */
  async function descriptionsOf(toolName: string): Promise<Set<string>> {
    const { tools } = (await runCli(["tools", "--json"], { cwd: dir })).json;
    const found = new Set<string>();
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (node && typeof node === "object") {
        for (const [key, value] of Object.entries(node)) {
          if (key === "description" && typeof value === "string") found.add(value);
          else walk(value);
        }
      }
    };
    walk(tools.find((tool: { name: string }) => tool.name === toolName).input_schema);
    return found;
  }

  const commands: Array<[string, () => string[]]> = [
    ["arbeit call arbeit_task_get", () => ["call", "arbeit_task_get", JSON.stringify({ task_id: taskId })]],
    ["arbeit task get", () => ["task", "get", taskId]],
    // One task a page: the answer hands out a next_cursor, with its check.
    ["arbeit query ready --limit 1", () => ["query", "ready", "--limit", "1"]],
    ["arbeit status", () => ["status"]],
    ["arbeit --help", () => ["--help"]],
    ["arbeit task create --help", () => ["task", "create", "--help"]],
    ["arbeit --version", () => ["--version"]],
    ["arbeit tools", () => ["tools"]],
    ["arbeit batch --help", () => ["batch", "--help"]],
  ];
  for (const [label, args] of commands) {
    it(`${label} runs in the core bundle alone and loads no stream, network or crypto module`, () => {
      const { bundles, builtins } = loads(...args());
      assert.deepEqual(bundles, ["arbeit-core.cjs"]);
      assert.deepEqual(
        builtins.filter((name) => HEAVY_BUILTINS.test(name)),
        [],
      );
    });
  }

  it("arbeit hook pre-tool-use before a file tool and before an Arbeit call loads no stream, network or child process, and no tool schema", async () => {
    const reserved = await runCli(
      ["call", "arbeit_task_claim", JSON.stringify({ task_id: taskId, paths: ["src/held/**"] }), "--session", "ses-a"],
      { cwd: dir },
    );
    assert.equal(reserved.code, 0, reserved.stdout);
    const payload = (tool: string, input: object) =>
      JSON.stringify({
        session_id: "ses-b",
        cwd: dir,
        hook_event_name: "PreToolUse",
        tool_name: tool,
        tool_input: input,
      });
    const calls: Array<[string, string, RegExp | undefined, string[]]> = [
      ["an Edit nobody holds", payload("Edit", { file_path: "src/free.ts" }), undefined, ["better-sqlite3"]],
      ["an Edit of a held file", payload("Edit", { file_path: "src/held/a.ts" }), /"deny"/, ["better-sqlite3"]],
      ["an Arbeit MCP call", payload("mcp__arbeit__arbeit_task_get", { task_id: taskId }), undefined, []],
    ];
    for (const [label, input, printed, packages] of calls) {
      const record = join(dir, "load-record.json");
      const env: NodeJS.ProcessEnv = { ...process.env, ARBEIT_LOAD_RECORD: record, CLAUDE_PROJECT_DIR: "" };
      for (const key of ARBEIT_SETTINGS) delete env[key];
      const result = spawnSync(process.execPath, ["-r", RECORDER, CLI, "hook", "pre-tool-use"], {
        cwd: dir,
        env,
        input,
        encoding: "utf8",
      });
      assert.equal(result.status, 0, `${label}: ${result.stderr}`);
      assert.equal(result.stderr, "", label);
      if (printed) assert.match(result.stdout, printed, label);
      else assert.equal(result.stdout, "", label);
      const loaded = JSON.parse(readFileSync(record, "utf8"));
      assert.deepEqual(loaded.bundles, ["arbeit-core.cjs"], label);
      // A refused edit is recorded (edit_refused) by the full hook, which writes to the store:
      // Node's streams come with that write. Refusals are rare; the quick path answers the rest.
      const refused = printed !== undefined;
      assert.deepEqual(
        loaded.builtins.filter(
          (name: string) =>
            (HEAVY_BUILTINS.test(name) || name === "module") &&
            !(refused && /^(stream|internal\/streams\/)/.test(name)),
        ),
        [],
        label,
      );
      assert.deepEqual(loaded.described, [], `${label} built no zod schema`);
      assert.deepEqual(loaded.packages, packages, label);
    }
  });

  it("a plain call builds only the zod schemas of the tool it calls", async () => {
    const own = await descriptionsOf("arbeit_task_get");
    for (const args of [
      ["call", "arbeit_task_get", JSON.stringify({ task_id: taskId })],
      ["task", "get", taskId],
    ]) {
      // Schemas registered with a description; the shared building blocks carry none.
      const built = loads(...args).described.filter((entry) => !entry.startsWith("{"));
      assert.deepEqual(
        built.filter((description) => !own.has(description)),
        [],
        `arbeit ${args[0]} built schemas of other tools or queries`,
      );
    }
  });

  it("the core bundle leaves out zod's translations and its JSON-schema importer", () => {
    const core = readFileSync(join(CLI_DIR, "../../dist/cli/arbeit-core.cjs"), "utf8");
    // Words of zod's German messages, and a keyword only z.fromJSONSchema reads.
    for (const text of ["Eingabe: erwartet", "$dynamicAnchor"]) assert.ok(!core.includes(text), text);
  });
});

describe("the CLI's code cache", () => {
  const CACHE = join(CLI_DIR, "../../dist/cli/.cache");

  function plainCoreCache(): { file: string; ino: number; mtimeMs: number } {
    const files = readdirSync(CACHE).filter((name) => name.startsWith("arbeit-core-") && name.endsWith(".bin"));
    const plain = files.filter((name) => !/-f[0-9a-f]+\.bin$/.test(name));
    assert.equal(plain.length, 1, `one cache of the core bundle for calls without Node flags: ${files.join(", ")}`);
    const { ino, mtimeMs } = statSync(join(CACHE, plain[0]!));
    return { file: plain[0]!, ino, mtimeMs };
  }

  const version = (...nodeFlags: string[]) => {
    const result = spawnSync(process.execPath, [...nodeFlags, CLI, "--version"], { encoding: "utf8" });
    assert.equal(result.status, 0, result.stderr);
  };

  it("a call under other V8 flags keeps a cache of its own and leaves the plain calls' cache alone", () => {
    version();
    const before = plainCoreCache();
    // V8 rejects a cache made under other flags; the rejecting call would write its own over it.
    version("--max-old-space-size=3000");
    version("--max-old-space-size=3000");
    version();
    assert.deepEqual(plainCoreCache(), before);
  });
});
