import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { runClaudeHook } from "../../src/claude/hooks.js";
import { quickPreToolUse } from "../../src/claude/pre-tool-use.js";
import { runCli } from "../helpers/cli.js";
import { letReservationRunOut } from "../helpers/expiry.js";
import { tempDir } from "../helpers/temp.js";
import { hookPayload, runHook } from "./hook-input.js";

/**
 * Claude Code's PreToolUse hook on file tools (`arbeit hook pre-tool-use` through the built CLI):
 * an edit of a file another live session reserved exclusively is denied with a reason naming the
 * holder, its task and until when; a shared one is allowed with a warning; nobody's file passes.
 */

const ALICE = "alice-claude-session";
const BOB = "bob-claude-session";

async function arbeit(dir: string, session: string, args: string[]): Promise<any> {
  const result = await runCli(["--session", session, "--agent", session.split("-")[0]!, ...args], { cwd: dir });
  assert.equal(result.code, 0, `${args.join(" ")}: ${result.stdout}${result.stderr}`);
  return result.json.data;
}
const call = (dir: string, session: string, tool: string, input: object) =>
  arbeit(dir, session, ["call", tool, JSON.stringify(input)]);

const preToolUse = async (dir: string, session: string, tool: string, input: object, extra: object = {}) => {
  const result = await runHook(
    "pre-tool-use",
    hookPayload(dir, session, "PreToolUse", { tool_name: tool, tool_input: input, tool_use_id: "toolu_9", ...extra }),
    dir,
  );
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stderr, "");
  return result.stdout.trim() === "" ? undefined : JSON.parse(result.stdout).hookSpecificOutput;
};

describe("Claude Code PreToolUse: file reservations", () => {
  let dir: string;
  let cleanup: () => void;
  let aliceTask: string;

  before(async () => {
    ({ dir, cleanup } = tempDir("arbeit-guard-"));
    mkdirSync(join(dir, "src", "auth"), { recursive: true });
    mkdirSync(join(dir, "docs"));
    writeFileSync(join(dir, "src", "auth", "session.ts"), "export {};\n");
    await arbeit(dir, ALICE, ["init"]);
    aliceTask = (await call(dir, ALICE, "arbeit_task_create", { title: "Rework sessions" })).task.id;
    const bobTask = (await call(dir, BOB, "arbeit_task_create", { title: "Write docs" })).task.id;
    await call(dir, ALICE, "arbeit_task_start_work", { task_id: aliceTask });
    await call(dir, ALICE, "arbeit_task_claim", { task_id: aliceTask, paths: ["src/auth/**"] });
    await call(dir, ALICE, "arbeit_task_claim", { task_id: aliceTask, paths: ["docs/"], shared: true });
    await call(dir, BOB, "arbeit_task_start_work", { task_id: bobTask });
  });

  after(() => cleanup());

  it("denies another session's Write, Edit, MultiEdit and NotebookEdit of an exclusively reserved file, naming holder, task and end", async () => {
    const file = join(dir, "src", "auth", "session.ts");
    for (const [tool, input] of [
      ["Edit", { file_path: file, old_string: "a", new_string: "b" }],
      ["Write", { file_path: join(dir, "src", "auth", "new.ts"), content: "x" }],
      ["MultiEdit", { file_path: file, edits: [] }],
      ["NotebookEdit", { notebook_path: join(dir, "src", "auth", "n.ipynb"), new_source: "" }],
    ] as const) {
      const out = await preToolUse(dir, BOB, tool, input);
      assert.equal(out?.permissionDecision, "deny", tool);
      assert.equal(out.hookEventName, "PreToolUse");
      assert.match(out.permissionDecisionReason, /reserved exclusively by alice \(session alice-claude-session, task /);
      assert.ok(out.permissionDecisionReason.includes(aliceTask));
      assert.match(out.permissionDecisionReason, /until \d{4}-\d\d-\d\dT/);
      assert.match(out.permissionDecisionReason, /Do not edit it: work on other files, or on another task/);
    }
  });

  it("denies a relative path from the call's folder, and Bash commands that plainly write the file", async () => {
    assert.equal(
      (await preToolUse(dir, BOB, "Edit", { file_path: "auth/session.ts" }, { cwd: join(dir, "src") }))
        ?.permissionDecision,
      "deny",
    );
    for (const command of [
      "echo x > src/auth/session.ts",
      "sed -i 's/a/b/' src/auth/session.ts",
      "npm run build && cp dist/x.js src/auth/x.js",
      "rm -f src/auth/session.ts",
      "cat notes | tee -a src/auth/log.txt",
    ]) {
      const out = await preToolUse(dir, BOB, "Bash", { command });
      assert.equal(out?.permissionDecision, "deny", command);
      assert.match(out.permissionDecisionReason, /src\/auth\//);
    }
  });

  it("lets the holder, its sub-agents, and anyone editing a file nobody holds go ahead silently", async () => {
    const file = join(dir, "src", "auth", "session.ts");
    assert.equal(await preToolUse(dir, ALICE, "Edit", { file_path: file }), undefined);
    assert.equal(await preToolUse(dir, ALICE, "Edit", { file_path: file }, { agent_id: "a1b2c3" }), undefined);
    assert.equal(await preToolUse(dir, BOB, "Write", { file_path: join(dir, "src", "free.ts") }), undefined);
    assert.equal(await preToolUse(dir, BOB, "Bash", { command: "cat src/auth/session.ts | wc -l" }), undefined);
    assert.equal(await preToolUse(dir, BOB, "Write", { file_path: "/tmp/elsewhere.txt" }), undefined);
    // Arbeit's own MCP calls are not checked.
    assert.equal(await preToolUse(dir, BOB, "mcp__arbeit__arbeit_task_get", { task_id: aliceTask }), undefined);
  });

  it("allows the edit of a file another session reserved shared, with the warning as context", async () => {
    const out = await preToolUse(dir, BOB, "Write", { file_path: join(dir, "docs", "guide.md"), content: "x" });
    assert.equal(out?.permissionDecision, undefined);
    assert.match(out.additionalContext, /docs\/guide\.md is also reserved \(shared\) by alice/);
  });

  it("in a project switched to warn-only, lets the denied edit through with the reason as a warning", async () => {
    await call(dir, ALICE, "arbeit_memory", { action: "set", key: "reservations.enforce", value: "warn" });
    const out = await preToolUse(dir, BOB, "Edit", { file_path: join(dir, "src", "auth", "session.ts") });
    assert.equal(out?.permissionDecision, undefined);
    assert.match(out.additionalContext, /reserved exclusively by alice .*warnings only/);
    await call(dir, ALICE, "arbeit_memory", { action: "delete", key: "reservations.enforce" });
    const denied = await preToolUse(dir, BOB, "Edit", { file_path: join(dir, "src", "auth", "session.ts") });
    assert.equal(denied?.permissionDecision, "deny");
  });

  const refusals = async () =>
    (await call(dir, ALICE, "arbeit_query", { query: "events", params: { event_types: ["edit_refused"], limit: 100 } }))
      .events;

  it("records a refused edit once per session, reservation and file, however often it is retried", async () => {
    const events = await refusals();
    const ofSession = events.filter((e: any) => e.payload.path === "src/auth/session.ts");
    // Denied above by Edit, MultiEdit, a relative path, echo, sed and rm: one record.
    assert.equal(ofSession.length, 1, JSON.stringify(events));
    const [refused] = ofSession;
    assert.deepEqual(
      [refused.entity_type, refused.session_id, refused.agent, refused.payload.pattern, refused.payload.holder],
      ["reservation", BOB, "claude-code", "src/auth/**", { session: ALICE, agent: "alice", task_id: aliceTask }],
    );
    const files = events.map((e: any) => e.payload.path).sort();
    assert.deepEqual(files, [...new Set(files)], "no file twice");
    assert.ok(events.every((e: any) => e.session_id === BOB));
    await preToolUse(dir, BOB, "Edit", { file_path: join(dir, "src", "auth", "session.ts") });
    assert.equal((await refusals()).length, events.length, "a retry records nothing");
  });

  it("allows the edit once the holder's work stops, and tells the refused session the file is free, once", async () => {
    await call(dir, ALICE, "arbeit_task_stop_work", { task_id: aliceTask });
    const step = async () => {
      const result = await runHook(
        "user-prompt-submit",
        hookPayload(dir, BOB, "UserPromptSubmit", { prompt: "go on" }),
        dir,
      );
      assert.equal(result.code, 0, result.stderr);
      return result.stdout;
    };
    const told = await step();
    assert.match(
      told,
      /src\/auth\/session\.ts is free now \(was held by alice \(session alice-claude-session, task tkt-[a-z0-9]{8}\)\)/,
    );
    assert.doesNotMatch(await step(), /is free now/, "told once");
    assert.equal(await preToolUse(dir, BOB, "Edit", { file_path: join(dir, "src", "auth", "session.ts") }), undefined);
  });

  it("tells the refused session the file is free once the reservation's lease ran out, though nobody recorded it", async () => {
    await call(dir, "carol-claude-session", "arbeit_task_claim", { paths: ["lib/x.ts"] });
    const denied = await preToolUse(dir, BOB, "Write", { file_path: join(dir, "lib", "x.ts"), content: "x" });
    assert.equal(denied?.permissionDecision, "deny");
    await letReservationRunOut({ cwd: dir }, "lib/x.ts");
    const step = async () =>
      (await runHook("user-prompt-submit", hookPayload(dir, BOB, "UserPromptSubmit", { prompt: "go on" }), dir)).stdout;
    assert.match(await step(), /lib\/x\.ts is free now \(was held by carol \(session carol-claude-session\)\)/);
    assert.doesNotMatch(await step(), /is free now/, "told once");
  });

  it("a store with refusals and the ends that freed them passes arbeit doctor (its replay knows edit_refused)", async () => {
    assert.ok((await refusals()).length > 0);
    const doctor = await runCli(["doctor", "--json"], { cwd: dir });
    assert.equal(doctor.code, 0, doctor.stdout);
  });
});

/**
 * The hook's quick path (src/claude/pre-tool-use.ts: the store file read directly, no store or
 * service loaded) gives the answer the service gives (runClaudeHook, which always asks the
 * service), case by case; what it cannot answer that way it leaves to the full hook.
 */
describe("Claude Code PreToolUse: the quick path answers as the service does", () => {
  const env = { PATH: process.env.PATH ?? "" };
  let dir: string;
  let cleanup: () => void;

  before(async () => {
    ({ dir, cleanup } = tempDir("arbeit-quick-"));
    mkdirSync(join(dir, "src", "auth"), { recursive: true });
    await arbeit(dir, ALICE, ["init"]);
    const task = (await call(dir, ALICE, "arbeit_task_create", { title: "Rework sessions" })).task.id;
    await call(dir, ALICE, "arbeit_task_start_work", { task_id: task });
    await call(dir, ALICE, "arbeit_task_claim", { task_id: task, paths: ["src/auth/**", "README.md"] });
    await call(dir, ALICE, "arbeit_task_claim", { task_id: task, paths: ["docs/"], shared: true });
    // A reservation whose lease has run out holds nothing.
    await call(dir, "carol-claude-session", "arbeit_task_claim", { paths: ["src/old.ts"] });
    await letReservationRunOut({ cwd: dir }, "src/old.ts");
  });
  after(() => cleanup());

  const ask = async (session: string | undefined, tool: string, input: object, extra: object = {}) => {
    const payload = JSON.stringify({
      ...(session ? { session_id: session } : {}),
      cwd: dir,
      tool_name: tool,
      tool_input: input,
      ...extra,
    });
    const quick = await quickPreToolUse(payload, {}, env, dir);
    const full = await runClaudeHook("pre-tool-use", payload, {}, env, dir);
    return { quick, full };
  };

  const cases: Array<[string, string | undefined, string, object, object?]> = [
    ["an exclusively held file (deny)", BOB, "Edit", { file_path: "src/auth/session.ts" }],
    ["a held file at the root (deny)", BOB, "Write", { file_path: "README.md" }],
    ["a file in a shared folder (warn)", BOB, "Write", { file_path: "docs/guide.md" }],
    ["a Bash command writing a held file (deny)", BOB, "Bash", { command: "echo x > src/auth/a.ts" }],
    ["a Bash command deleting the folder of a held file (deny)", BOB, "Bash", { command: "rm -rf src" }],
    ["a Bash command writing a held file after a cd (deny)", BOB, "Bash", { command: "cd src/auth && echo x > a.ts" }],
    ["a Bash command moving a free file (allow)", BOB, "Bash", { command: "mv src/free.ts src/other.ts" }],
    ["the holder's own edit (allow)", ALICE, "Edit", { file_path: "src/auth/session.ts" }],
    ["the holder's sub-agent (allow)", ALICE, "Edit", { file_path: "src/auth/session.ts" }, { agent_id: "a1" }],
    ["another's sub-agent (deny)", BOB, "Edit", { file_path: "src/auth/session.ts" }, { agent_id: "b1" }],
    ["a file nobody holds (allow)", BOB, "Edit", { file_path: "src/free.ts" }],
    ["a file whose reservation ran out (allow)", BOB, "Edit", { file_path: "src/old.ts" }],
    ["a file outside the project (allow)", BOB, "Write", { file_path: "/tmp/elsewhere.txt" }],
    ["no session (allow)", undefined, "Edit", { file_path: "src/auth/session.ts" }],
    ["an Arbeit MCP call (not checked)", BOB, "mcp__arbeit__arbeit_task_get", { task_id: "tkt-00000000" }],
  ];
  /** deny, warn or allow, as Claude Code reads the hook's output. */
  const decision = (stdout: string) => {
    if (stdout === "") return "allow";
    const out = JSON.parse(stdout).hookSpecificOutput;
    return out.permissionDecision ?? (out.additionalContext ? "warn" : "?");
  };
  for (const [label, session, tool, input, extra] of cases) {
    it(label, async () => {
      const { quick, full } = await ask(session, tool, input, extra);
      const expected = /\((deny|warn|allow)\)/.exec(label)?.[1] ?? "allow";
      assert.equal(decision(full.stdout), expected);
      // A refusal is recorded, which the read-only quick path leaves to the full hook.
      if (expected === "deny") assert.equal(quick, undefined, "the full hook answers a refusal");
      else {
        assert.notEqual(quick, undefined, "the quick path answered");
        assert.deepEqual(quick, full);
      }
    });
  }

  it("applies the project's warn-only switch as the service does", async () => {
    await call(dir, ALICE, "arbeit_memory", { action: "set", key: "reservations.enforce", value: "warn" });
    try {
      const { quick, full } = await ask(BOB, "Edit", { file_path: "src/auth/session.ts" });
      assert.match(quick!.stdout, /warnings only/);
      assert.deepEqual(quick, full);
    } finally {
      await call(dir, ALICE, "arbeit_memory", { action: "delete", key: "reservations.enforce" });
    }
  });

  it("leaves to the full hook a file name with wildcard characters, a service checkout and a Postgres one", async () => {
    const file = { file_path: "src/auth/a*b.ts" };
    const payload = JSON.stringify({ session_id: BOB, cwd: dir, tool_name: "Edit", tool_input: file });
    assert.equal(await quickPreToolUse(payload, {}, env, dir), undefined);
    const edit = JSON.stringify({ session_id: BOB, cwd: dir, tool_name: "Edit", tool_input: { file_path: "x.ts" } });
    assert.equal(await quickPreToolUse(edit, {}, { ...env, ARBEIT_URL: "http://127.0.0.1:9" }, dir), undefined);
    assert.equal(
      await quickPreToolUse(edit, {}, { ...env, ARBEIT_DATABASE_URL: "postgres://x@127.0.0.1/t" }, dir),
      undefined,
    );
    // An explicit SQLite file wins over both, as it does for the full hook.
    const db = join(dir, ".arbeit", "arbeit.db");
    assert.deepEqual(await quickPreToolUse(edit, { db }, { ...env, ARBEIT_URL: "http://127.0.0.1:9" }, dir), {
      stdout: "",
      stderr: "",
    });
  });

  it("leaves to the full hook a store at another schema version (the full hook migrates or refuses it, saying why)", async () => {
    const { dir: old, cleanup: done } = tempDir("arbeit-quick-old-");
    try {
      await arbeit(old, BOB, ["init"]);
      const file = join(old, ".arbeit", "arbeit.db");
      const Database = (await import("better-sqlite3")).default;
      const raw = new Database(file);
      const version = raw.pragma("user_version", { simple: true }) as number;
      raw.pragma(`user_version = ${version + 1}`);
      raw.close();
      const edit = JSON.stringify({ session_id: BOB, cwd: old, tool_name: "Edit", tool_input: { file_path: "x.ts" } });
      assert.equal(await quickPreToolUse(edit, {}, env, old), undefined, "a newer schema is not read as this one");
      const full = await runClaudeHook("pre-tool-use", edit, {}, env, old);
      assert.match(full.stderr, /schema version/, "the full hook says why");
    } finally {
      done();
    }
  });
});
