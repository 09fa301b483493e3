import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { dropSchema, postgresSkip, TEST_DATABASE_URL, uniqueSchema } from "../helpers/postgres.js";
import { requirement } from "../helpers/requirements.js";
import { type ArbeitProject, setUpArbeitProject } from "./arbeit-project.js";
import { type ClaudeRun, type ClaudeSandbox, claudeMissing, createSandbox, runClaude } from "./claude-harness.js";
import {
  type FakeAnthropic,
  firstUserText,
  type MessagesRequest,
  startFakeAnthropic,
  type Turn,
  toolResults,
} from "./fake-anthropic.js";

/**
 * File reservations enforced in the real Claude Code CLI (docs/parallel.md): two conversations on
 * one project, each on its own task. The first starts work on its task and reserves
 * `src/auth/**` exclusively, then keeps thinking; meanwhile the second's Edit of
 * `src/auth/session.ts` is denied by the PreToolUse hook, with the holder's session and task
 * named, and the file is left as it was. Once the first conversation's run ends (its work stops,
 * its reservations go), the second's Edit goes through. The same with the project on SQLite (the
 * hook reads the file directly) and on Postgres (the hook asks through the service).
 */

const RUN_TIMEOUT_MS = 60_000;
const ALLOWED_TOOLS = ["mcp__arbeit__*", "Read", "Write", "Edit", "Bash"];
const START_WORK = "mcp__arbeit__arbeit_task_start_work";
const CLAIM = "mcp__arbeit__arbeit_task_claim";
const FILE = join("src", "auth", "session.ts");
const ORIGINAL = "export const cookie = 'lax';\n";

const cannotRun = requirement("the real-Claude-Code reservations test", claudeMissing());

for (const engine of ["sqlite", "postgres"] as const) {
  describe(`Claude Code, real binary, on ${engine}: an exclusive reservation stops another conversation's Edit`, {
    skip: cannotRun || (engine === "postgres" ? await postgresSkip() : false),
    timeout: 6 * RUN_TIMEOUT_MS,
  }, () => {
    const schema = engine === "postgres" ? uniqueSchema("arbeit_claude_rsv") : "";
    /** Postgres: the project's store, for `arbeit` and for Claude Code's hooks and MCP server alike. */
    const env: Record<string, string> =
      engine === "postgres" ? { ARBEIT_DATABASE_URL: TEST_DATABASE_URL, ARBEIT_DATABASE_SCHEMA: schema } : {};
    let sandbox: ClaudeSandbox;
    let fake: FakeAnthropic;
    let setup: ArbeitProject;
    let holderTask: string;
    let editorTask: string;
    let holderSession: string | undefined;
    /** Resolves when the holder has its reservation; the holder's run waits for `release`. */
    let reserved!: () => void;
    const holderReserved = new Promise<void>((resolve) => (reserved = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));

    function script(request: MessagesRequest): Turn | Promise<Turn> {
      const done = toolResults(request);
      const first = firstUserText(request);
      const call = (id: string, name: string, input: Record<string, unknown>): Turn => ({
        tools: [{ id, name, input }],
      });
      const read = (id: string) => call(id, "Read", { file_path: join(sandbox.project, FILE) });
      const edit = (id: string) =>
        call(id, "Edit", { file_path: join(sandbox.project, FILE), old_string: "'lax'", new_string: "'strict'" });
      if (first.includes("HOLDER-PROMPT")) {
        if (!done.has("toolu_holder_start")) return call("toolu_holder_start", START_WORK, { task_id: holderTask });
        if (!done.has("toolu_holder_reserve"))
          return call("toolu_holder_reserve", CLAIM, { task_id: holderTask, paths: ["src/auth/**"] });
        reserved();
        return released.then(() => ({ text: "HOLDER-DONE" }));
      }
      // A resumed conversation's first prompt is still the first run's.
      if (JSON.stringify(request.messages).includes("EDITOR-AGAIN-PROMPT")) {
        if (!done.has("toolu_editor_reread")) return read("toolu_editor_reread");
        if (!done.has("toolu_editor_again")) return edit("toolu_editor_again");
        return { text: "EDITOR-AGAIN-DONE" };
      }
      if (first.includes("EDITOR-PROMPT")) {
        if (!done.has("toolu_editor_start")) return call("toolu_editor_start", START_WORK, { task_id: editorTask });
        // Claude Code edits only a file the conversation has read.
        if (!done.has("toolu_editor_read")) return read("toolu_editor_read");
        if (!done.has("toolu_editor_edit")) return edit("toolu_editor_edit");
        return { text: "EDITOR-DONE" };
      }
      return { text: "OK" };
    }

    const claude = (prompt: string, resume?: string): Promise<ClaudeRun> =>
      runClaude({
        sandbox,
        baseUrl: fake.baseUrl,
        prompt,
        resume,
        allowedTools: ALLOWED_TOOLS,
        permissionMode: "acceptEdits",
        timeoutMs: RUN_TIMEOUT_MS,
        env,
      });

    /** The tool_result Claude Code sent back for `id`, from the requests of the run. */
    const resultOf = (id: string) => {
      for (const request of [...fake.requests].reverse()) {
        const found = toolResults(request).get(id);
        if (found) return found;
      }
      return undefined;
    };

    before(
      async () => {
        sandbox = createSandbox();
        setup = await setUpArbeitProject(sandbox, "reservations-project", { install: false, env });
        if (engine === "postgres") {
          const record = JSON.parse(readFileSync(join(sandbox.project, ".arbeit", "config.json"), "utf8"));
          assert.deepEqual(record, { store: "postgres", schema }, "the checkout records its Postgres store");
          assert.ok(!existsSync(join(sandbox.project, ".arbeit", "arbeit.db")), "no SQLite store beside it");
        }
        holderTask = (await setup.arbeit("call", "arbeit_task_create", JSON.stringify({ title: "Rework sessions" })))
          .task.id;
        editorTask = (await setup.arbeit("call", "arbeit_task_create", JSON.stringify({ title: "Harden cookies" })))
          .task.id;
        mkdirSync(join(sandbox.project, "src", "auth"), { recursive: true });
        writeFileSync(join(sandbox.project, FILE), ORIGINAL);
        fake = await startFakeAnthropic(script);
      },
      { timeout: 2 * 60_000 },
    );

    after(async () => {
      release?.();
      await fake?.close();
      sandbox?.cleanup();
      if (engine === "postgres") await dropSchema(schema);
    });

    it("denies the second conversation's Edit naming the holder, leaves the file untouched, then allows it once the holder stops", async () => {
      const holderRun = claude("HOLDER-PROMPT: start work on the sessions task and reserve src/auth.");
      await holderReserved;
      const reservations = await setup.withStore(
        async (service) =>
          (await service.query({ query: "reservations" }, { agent: "test", session: null })).data as any,
      );
      const held = reservations.results ?? reservations.reservations ?? reservations;
      holderSession = JSON.stringify(held).match(/"session(?:_id)?":"([0-9a-f-]{36})"/)?.[1];
      assert.ok(holderSession, `the holder's reservation is listed: ${JSON.stringify(reservations)}`);

      const editor = await claude("EDITOR-PROMPT: start work on the cookie task and make the cookie strict.");
      assert.equal(editor.code, 0, editor.stderr);
      const denied = resultOf("toolu_editor_edit");
      assert.ok(denied, "the Edit's result came back to the model");
      assert.equal(denied.isError, true);
      assert.match(denied.text, /src\/auth\/session\.ts is reserved exclusively by claude-code/);
      assert.ok(denied.text.includes(`session ${holderSession}`), denied.text);
      assert.ok(denied.text.includes(`task ${holderTask}`), denied.text);
      assert.match(denied.text, /until \d{4}-\d\d-\d\dT[\d:.]+Z/);
      assert.match(denied.text, /Do not edit it/);
      assert.deepEqual(
        (editor.result?.permission_denials ?? []).map((d: any) => d.tool_name),
        ["Edit"],
        "the denial is Claude Code's own, from the hook",
      );
      assert.equal(readFileSync(join(sandbox.project, FILE), "utf8"), ORIGINAL, "the file is left untouched");

      // The holder's run ends: its work stops and its reservations go with it.
      release();
      const holder = await holderRun;
      assert.equal(holder.code, 0, holder.stderr);
      assert.equal(holder.sessionId, holderSession);

      const again = await claude("EDITOR-AGAIN-PROMPT: make the cookie strict now.", editor.sessionId);
      assert.equal(again.code, 0, again.stderr);
      assert.equal(resultOf("toolu_editor_again")?.isError, false, JSON.stringify(resultOf("toolu_editor_again")));
      assert.equal(readFileSync(join(sandbox.project, FILE), "utf8"), "export const cookie = 'strict';\n");
      assert.deepEqual(again.result?.permission_denials ?? [], []);
    });
  });
}
