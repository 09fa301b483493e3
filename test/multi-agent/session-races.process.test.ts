import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { hookPayload, runHook } from "../claude/hook-input.js";
import { runCli } from "../helpers/cli.js";
import { connectMcp, type McpTestClient } from "../mcp/mcp-client.js";
import { apiCall, makeToken, mcpClient, type Service, startService } from "../serve/harness.js";
import { type UiProject, uiProject } from "../ui/harness.js";
import { ENGINES, onEngine, sharedStore } from "./helpers.js";

/**
 * The rules of one session, with its calls fired at once at one process: `arbeit mcp` (one
 * stdio connection, whose tools/call requests the server runs side by side) and `arbeit serve`
 * (several agents' tokens). On Postgres the store runs them in parallel transactions; each rule
 * must hold as SQLite's single writer holds it.
 */

const AT_ONCE = 6;
const codes = (envelopes: Array<{ success: boolean; error?: { code: string } }>) =>
  envelopes.map((e) => (e.success ? "ok" : e.error!.code));
const oneOk = (rest: string) => ["ok", ...Array(AT_ONCE - 1).fill(rest)];

/** The real CLI in the project as Claude Code's session (the tasks its hooks work on); fails on a tool error. */
const claudeCli =
  (project: { dir: string; env: Record<string, string> }, session: string) => async (args: string[]) => {
    const result = await runCli(["--session", session, "--agent", "claude-code", ...args], {
      cwd: project.dir,
      env: project.env,
    });
    assert.equal(result.code, 0, result.stdout + result.stderr);
    return result.json.data;
  };

for (const engine of ENGINES) {
  describe(`one arbeit mcp over stdio on ${engine}, calls fired at once`, await onEngine(engine), () => {
    const project = sharedStore(engine, "arbeit_races_mcp");
    let mcp: McpTestClient;
    before(async () => {
      mcp = await connectMcp(project.dir, { env: project.env });
    });
    after(async () => mcp?.close());

    const create = async (title: string) => (await mcp.ok("arbeit_task_create", { title })).task.id as string;

    it(`starting work on ${AT_ONCE} tasks at once: the session works on one, the others are ALREADY_WORKING`, async () => {
      // Made at once as well: the server then holds as many open connections as the calls to
      // come, as a busy one does, and their transactions start together.
      const tasks = await Promise.all(Array.from({ length: AT_ONCE }, (_, i) => create(`job ${i}`)));
      const answers = await Promise.all(tasks.map((task_id) => mcp.call("arbeit_task_start_work", { task_id })));
      const envelopes = answers.map((a) => a.envelope);
      assert.deepEqual(codes(envelopes).sort(), oneOk("ALREADY_WORKING").sort());
      const won = tasks[envelopes.findIndex((e) => e.success)]!;
      const session = envelopes.find((e) => e.success).data.session_id as string;
      for (const e of envelopes.filter((e) => !e.success)) assert.equal(e.error.details.task_id, won);
      // Nothing of the refused calls is left: no claim, no status change.
      const claimed = await project.service.store.read((tx) => tx.claimsOf(session, tx.databaseNow()));
      assert.deepEqual(
        claimed.map((task) => task.id),
        [won],
      );
      const active = await mcp.ok("arbeit_query", { query: "tasks", params: { status: "in_progress" } });
      assert.deepEqual(
        active.tasks.map((task: { id: string }) => task.id),
        [won],
      );
    });

    it("one request_id sent several times at once runs the call once; every answer is the first's", async () => {
      const [task] = await Promise.all(Array.from({ length: AT_ONCE }, (_, i) => create(`Renamed once ${i}`)));
      const answers = await Promise.all(
        Array.from({ length: AT_ONCE }, () =>
          mcp.call("arbeit_task_update", {
            task_id: task,
            title: "Renamed",
            expected_version: 1,
            request_id: "rename-once",
          }),
        ),
      );
      assert.deepEqual(codes(answers.map((a) => a.envelope)), Array(AT_ONCE).fill("ok"));
      for (const answer of answers) assert.deepEqual(answer.envelope.data, answers[0]!.envelope.data);
      assert.equal((await mcp.ok("arbeit_task_get", { task_id: task })).task.version, 2);
    });
  });

  describe(`Claude Code hooks on ${engine}, fired at once`, await onEngine(engine), () => {
    const project = sharedStore(engine, "arbeit_races_hooks");
    const session = "5e1f0a2b-claude-session";
    const cli = claudeCli(project, session);

    it("the same TodoWrite list seen by several PostToolUse hooks at once adds each step once", async () => {
      const task = (await cli(["call", "arbeit_task_create", '{"title": "Ship the docs"}'])).task.id;
      await cli(["call", "arbeit_task_start_work", JSON.stringify({ task_id: task })]);
      const todos = [
        { content: "Outline", status: "completed", activeForm: "Outlining" },
        { content: "Draft", status: "in_progress", activeForm: "Drafting" },
        { content: "Review", status: "pending", activeForm: "Reviewing" },
      ];
      const payload = hookPayload(project.dir, session, "PostToolUse", {
        tool_name: "TodoWrite",
        tool_input: { todos },
        tool_response: { oldTodos: [], newTodos: todos },
      });
      const hooks = await Promise.all(
        Array.from({ length: AT_ONCE }, () => runHook("post-tool-use", payload, project.dir, project.env)),
      );
      for (const hook of hooks) assert.equal(hook.code, 0, hook.stderr);
      const { progress } = await cli([
        "call",
        "arbeit_task_get",
        JSON.stringify({ task_id: task, include: ["progress"] }),
      ]);
      assert.deepEqual(
        progress.map(
          (item: { content: string; completed: boolean }) => `[${item.completed ? "x" : " "}] ${item.content}`,
        ),
        ["[x] Outline", "[ ] Draft", "[ ] Review"],
      );
    });
  });

  describe(`Claude Code hooks on ${engine}, failures at once`, await onEngine(engine), () => {
    const project = sharedStore(engine, "arbeit_races_failures");
    const session = "7a3c9e1d-claude-session";

    it("parallel tool calls failing at once are recorded on the task as one attempt, as a failure a minute is", async () => {
      const run = claudeCli(project, session);
      const task = (await run(["call", "arbeit_task_create", '{"title": "Fix the build"}'])).task.id;
      await run(["call", "arbeit_task_start_work", JSON.stringify({ task_id: task })]);
      const hooks = await Promise.all(
        Array.from({ length: AT_ONCE }, (_, i) =>
          runHook(
            "post-tool-use-failure",
            hookPayload(project.dir, session, "PostToolUseFailure", {
              tool_name: "Bash",
              tool_input: { command: `npm test -- part ${i}` },
              error: `Exit code 1\npart ${i} failing`,
              tool_use_id: `toolu_${i}`,
            }),
            project.dir,
            project.env,
          ),
        ),
      );
      for (const hook of hooks) assert.equal(hook.code, 0, hook.stderr);
      const { context } = await run([
        "call",
        "arbeit_task_get",
        JSON.stringify({ task_id: task, include: ["context"] }),
      ]);
      assert.equal(context.filter((entry: { type: string }) => entry.type === "attempt").length, 1);
    });
  });

  describe(`arbeit serve on ${engine}, agents writing at once`, await onEngine(engine), () => {
    let project: UiProject;
    let service: Service;
    let second: Service | undefined;
    const tokens: string[] = [];

    before(async () => {
      project = await uiProject(engine);
      for (let i = 0; i < AT_ONCE; i++) tokens.push(await makeToken(project, ["--agent", `agent-${i}`]));
      service = await startService(project);
      // Across processes too: a second service on the same store (on SQLite, one file).
      second = await startService(project);
    });
    after(async () => {
      await service?.stop("SIGKILL");
      await second?.stop("SIGKILL");
      await project?.close();
    });

    /** Who the session's events name: an owned session names one agent. */
    const agentsOf = async (session: string): Promise<string[]> => {
      const { events } = await project.cli(["call", "arbeit_query", '{"query": "events", "params": {"limit": 1000}}']);
      const agents = new Set<string>();
      for (const event of events as Array<{ session_id: string; agent: string }>)
        if (event.session_id === session) agents.add(event.agent);
      return [...agents];
    };

    it(`${AT_ONCE} agents' tokens writing at once into a session nobody has used: one gets it, the others are FORBIDDEN`, async () => {
      for (let round = 0; round < 3; round++) {
        const session = `fresh-api-${round}`;
        const answers = await Promise.all(
          tokens.map((token, i) =>
            apiCall(i % 2 === 0 ? service : second!, token, {
              tool: "arbeit_task_create",
              args: { title: `by agent-${i}` },
              session,
            }),
          ),
        );
        assert.deepEqual(codes(answers.map((a) => a.body)).sort(), oneOk("FORBIDDEN").sort());
        const winner = answers.findIndex((a) => a.body.success);
        assert.deepEqual(await agentsOf(session), [`agent-${winner}`]);
        // The refused calls wrote nothing.
        const { tasks } = await project.cli(["call", "arbeit_query", '{"query": "tasks", "params": {"limit": 500}}']);
        const made = tasks.filter((task: { id: string }) =>
          answers.some((a, i) => i !== winner && a.body.data?.task?.id === task.id),
        );
        assert.deepEqual(made, []);
      }
    });

    it(`${AT_ONCE} agents' MCP sessions over HTTP naming one fresh session at once: one gets it`, async () => {
      for (let round = 0; round < 3; round++) {
        const session = `fresh-mcp-${round}`;
        const clients = await Promise.all(
          tokens.map((token, i) => mcpClient(i % 2 === 0 ? service : second!, token, { "X-Arbeit-Session": session })),
        );
        try {
          const answers = await Promise.all(
            clients.map((client, i) => client.call("arbeit_task_create", { title: `mcp by agent-${i}` })),
          );
          assert.deepEqual(codes(answers).sort(), oneOk("FORBIDDEN").sort());
          assert.deepEqual(await agentsOf(session), [`agent-${answers.findIndex((a) => a.success)}`]);
        } finally {
          await Promise.all(clients.map((client) => client.close()));
        }
      }
    });

    it(`one token starting work on ${AT_ONCE} tasks at once in its session: it works on one, the others are ALREADY_WORKING`, async () => {
      const tasks: string[] = [];
      for (let i = 0; i < AT_ONCE; i++)
        tasks.push(
          (await apiCall(service, tokens[0], { tool: "arbeit_task_create", args: { title: `serve job ${i}` } })).body
            .data.task.id,
        );
      const answers = await Promise.all(
        tasks.map((task_id, i) =>
          apiCall(i % 2 === 0 ? service : second!, tokens[0], {
            tool: "arbeit_task_start_work",
            args: { task_id },
            session: "serve-busy",
          }),
        ),
      );
      assert.deepEqual(codes(answers.map((a) => a.body)).sort(), oneOk("ALREADY_WORKING").sort());
      const { tasks: active } = await project.cli([
        "call",
        "arbeit_query",
        '{"query": "tasks", "params": {"status": "in_progress"}}',
      ]);
      assert.deepEqual(
        active.map((task: { id: string }) => task.id),
        [tasks[answers.findIndex((a) => a.body.success)]],
      );
    });
  });
}
