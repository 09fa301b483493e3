import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { postgresSkip } from "../helpers/postgres.js";
import { requirement } from "../helpers/requirements.js";
import { makeToken, type Service, startService } from "../serve/harness.js";
import { type Engine, type UiProject, uiProject } from "../ui/harness.js";
import {
  CLAUDE,
  type ClaudeRun,
  type ClaudeSandbox,
  claudeEnv,
  claudeMissing,
  createSandbox,
  runClaude,
} from "./claude-harness.js";
import { type FakeAnthropic, startFakeAnthropic, toolNames, toolResults } from "./fake-anthropic.js";

/**
 * The real Claude Code with `arbeit serve` as a remote MCP server over HTTP: no Arbeit in the
 * project Claude Code runs in, only an .mcp.json naming the service's /mcp and a bearer token.
 */

const cannotRun = requirement("the real-Claude-Code run against arbeit serve", claudeMissing());
const CREATE = "mcp__arbeit__arbeit_task_create";
const GET = "mcp__arbeit__arbeit_task_get";
/** Claude Code's placeholder for an environment variable, as written in .mcp.json: `${NAME}`. */
const variable = (name: string) => `\${${name}}`;
const URL_WITH_VARIABLES = `http://${variable("ARBEIT_HOST:-127.0.0.1")}:${variable("ARBEIT_PORT")}/mcp`;
const HEADER_WITH_VARIABLE = `Bearer ${variable("ARBEIT_TOKEN")}`;

interface RemoteRun {
  run: ClaudeRun;
  fake: FakeAnthropic;
  sandbox: ClaudeSandbox;
}

/**
 * Runs `claude -p` in a fresh project that `configure` gives an .mcp.json; the scripted model
 * creates a task titled `title` through the remote server, then reads it back by its id.
 */
async function remoteRun(
  title: string,
  configure: (sandbox: ClaudeSandbox, baseUrl: string) => void,
  env: Record<string, string> = {},
): Promise<RemoteRun> {
  const sandbox = createSandbox();
  const fake = await startFakeAnthropic((request) => {
    if (!toolNames(request).includes(CREATE)) return { text: "title" };
    const done = toolResults(request);
    const created = done.get("toolu_create");
    if (!created) return { tools: [{ id: "toolu_create", name: CREATE, input: { title } }] };
    const id = /\btkt-[0-9a-z]+/.exec(created.text)?.[0];
    if (!id) return { text: `NO-TASK-ID in ${created.text}` };
    if (!done.has("toolu_get")) return { tools: [{ id: "toolu_get", name: GET, input: { task_id: id } }] };
    return { text: "REMOTE-DONE" };
  });
  configure(sandbox, fake.baseUrl);
  const run = await runClaude({
    sandbox,
    baseUrl: fake.baseUrl,
    prompt: `Record a task titled "${title}", then read it back.`,
    allowedTools: ["mcp__arbeit"],
    env,
  });
  return { run, fake, sandbox };
}

for (const engine of ["sqlite", "postgres"] as Engine[]) {
  describe(`Claude Code, real binary, with arbeit serve on ${engine} as a remote MCP server over HTTP`, {
    skip: cannotRun || (engine === "postgres" ? await postgresSkip() : false),
    timeout: 300_000,
  }, () => {
    let project: UiProject;
    let service: Service;
    let token: string;
    const runs: RemoteRun[] = [];

    /** The task titled `title` in the service's store, and the agent its creation event names. */
    async function madeInService(title: string): Promise<{ id: string; agent: string; session: string }> {
      const tasks = (await project.cli(["call", "arbeit_query", '{"query": "tasks"}'])).tasks;
      const task = tasks.find((candidate: any) => candidate.title === title);
      assert.ok(task, `no task "${title}" in the service's store: ${JSON.stringify(tasks)}`);
      const events = (await project.cli(["call", "arbeit_query", '{"query": "events", "params": {"limit": 1000}}']))
        .events;
      const created = events.find((event: any) => event.task_id === task.id && event.event_type === "task_created");
      assert.ok(created, `no task_created event for ${task.id}: ${JSON.stringify(events)}`);
      return { id: task.id, agent: created.agent, session: created.session_id };
    }

    /** The scripted conversation ran to its end: the create and the read came back without error. */
    function assertConversation({ run, fake }: RemoteRun, title: string): void {
      const diagnosis = `${run.stderr}\n${run.stdout.slice(-3000)}\nservice log:\n${service.stderr()}`;
      assert.equal(run.result?.result, "REMOTE-DONE", diagnosis);
      const results = toolResults(fake.requests.at(-1)!);
      assert.equal(results.get("toolu_create")?.isError, false, diagnosis);
      assert.equal(results.get("toolu_get")?.isError, false, diagnosis);
      assert.match(results.get("toolu_get")?.text ?? "", new RegExp(title), diagnosis);
    }

    before(async () => {
      project = await uiProject(engine);
      token = await makeToken(project, ["--agent", "remote-claude"]);
      service = await startService(project);
    });
    after(async () => {
      for (const { fake, sandbox } of runs) {
        await fake.close();
        sandbox.cleanup();
      }
      await service?.stop("SIGKILL");
      await project?.close();
    });

    it("with the token written in .mcp.json's headers, the model creates a task and reads it back; the task is in the service's store, made as the token's agent", async () => {
      const title = "Made over HTTP with a literal token";
      const remote = await remoteRun(title, (sandbox) => {
        const server = { type: "http", url: `${service.url}/mcp`, headers: { Authorization: `Bearer ${token}` } };
        writeFileSync(join(sandbox.project, ".mcp.json"), JSON.stringify({ mcpServers: { arbeit: server } }, null, 2));
      });
      runs.push(remote);
      assertConversation(remote, title);
      const made = await madeInService(title);
      assert.equal(made.agent, "remote-claude");
      // With no session named by the client, the MCP session is the Arbeit session.
      assert.match(made.session, /^mcp-/);
      assert.match(service.stderr(), /remote-claude POST \/mcp arbeit_task_create 200/);
    });

    it("`claude mcp add --transport http --scope project` with placeholders for the token in the header and for the port and host (with a default) in the URL: the file names no secret, and Claude Code fills them from its environment, the default where a variable is unset", async () => {
      const title = "Made over HTTP with the token from the environment";
      const port = new URL(service.url).port;
      let written = "";
      const remote = await remoteRun(
        title,
        (sandbox, baseUrl) => {
          execFileSync(
            CLAUDE,
            [
              "mcp",
              "add",
              "--scope",
              "project",
              "--transport",
              "http",
              "arbeit",
              URL_WITH_VARIABLES,
              "--header",
              `Authorization: ${HEADER_WITH_VARIABLE}`,
            ],
            { cwd: sandbox.project, env: { ...claudeEnv(sandbox, baseUrl), PWD: sandbox.project }, stdio: "pipe" },
          );
          written = readFileSync(join(sandbox.project, ".mcp.json"), "utf8");
        },
        { ARBEIT_PORT: port, ARBEIT_TOKEN: token },
      );
      runs.push(remote);
      // What is committed names the variables, never the secret or the port.
      assert.deepEqual(JSON.parse(written), {
        mcpServers: {
          arbeit: {
            type: "http",
            url: URL_WITH_VARIABLES,
            headers: { Authorization: HEADER_WITH_VARIABLE },
          },
        },
      });
      assertConversation(remote, title);
      assert.equal((await madeInService(title)).agent, "remote-claude");
    });

    it("Claude Code does not hand its conversation id to an http server: CLAUDE_CODE_SESSION_ID is unset where .mcp.json's placeholders are filled and in a headersHelper", async () => {
      const title = "Made over HTTP, asking for the conversation's id";
      // docs/mcp.md states this; a Claude Code that passes the id fails here, and the page then
      // needs to say how to send it.
      let seen = "";
      const remote = await remoteRun(title, (sandbox) => {
        seen = join(sandbox.root, "helper-saw.json");
        // A headersHelper prints extra headers as JSON; this one notes the id it was given.
        const helper = join(sandbox.root, "headers-helper.cjs");
        writeFileSync(
          helper,
          `require("node:fs").writeFileSync(${JSON.stringify(seen)}, JSON.stringify({ id: process.env.CLAUDE_CODE_SESSION_ID ?? null }));\nconsole.log("{}");\n`,
        );
        const headers = {
          Authorization: `Bearer ${token}`,
          "X-Arbeit-Session": variable("CLAUDE_CODE_SESSION_ID:-unset"),
        };
        const server = {
          type: "http",
          url: `${service.url}/mcp`,
          headers,
          headersHelper: `${process.execPath} ${helper}`,
        };
        writeFileSync(join(sandbox.project, ".mcp.json"), JSON.stringify({ mcpServers: { arbeit: server } }, null, 2));
      });
      runs.push(remote);
      assertConversation(remote, title);
      assert.ok(remote.run.sessionId);
      assert.equal((await madeInService(title)).session, "unset");
      assert.deepEqual(JSON.parse(readFileSync(seen, "utf8")), { id: null });
    });
  });
}
