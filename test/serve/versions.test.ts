import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { after, before, describe, it } from "node:test";
import { clientRange, OLDEST_CLIENT } from "../../src/domain/client-versions.js";
import { hookPayload } from "../claude/hook-input.js";
import { ARBEIT_SETTINGS, CLI, runCli } from "../helpers/cli.js";
import { releaseCopy } from "../helpers/release-copy.js";
import { type Checkout, checkout } from "../remote/harness.js";
import { type UiProject, uiProject } from "../ui/harness.js";
import { apiCall, makeToken, mcpClient, RELEASE, type Service, startService } from "./harness.js";

/**
 * Clients and `arbeit serve` exchange releases (docs/team.md#versions): the real service, the
 * real CLI and hook processes of this release, and copies of this build that state another
 * release (test/helpers/release-copy.ts), as an older or a newer install would.
 */

const SESSION = "claude-versions-1";
/** An older release than any this service serves, and the first of the next release line. */
const OLD = "0.0.9";
const NEW = clientRange(RELEASE).below;
const SERVES = clientRange(RELEASE).text;

/** A pattern matching `text` literally, with `.*` in it kept as "anything". */
const pattern = (text: string) =>
  new RegExp(
    text
      .split(".*")
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
      .join(".*"),
  );

/** What `arbeit status` prints on a terminal (a pseudo-terminal by util-linux `script`), in `cwd`. */
function statusOnTerminal(cwd: string, env: Record<string, string>): Promise<string> {
  const quoted = [process.execPath, CLI, "status"].map((part) => `'${part.replaceAll("'", "'\\''")}'`).join(" ");
  const outer: NodeJS.ProcessEnv = { ...process.env, ...env, NO_COLOR: "1" };
  for (const key of ARBEIT_SETTINGS) if (!env[key]) delete outer[key];
  return new Promise((resolve, reject) =>
    execFile("script", ["-qec", quoted, "/dev/null"], { cwd, env: outer }, (error, stdout) =>
      error && error.code !== 1 ? reject(error) : resolve(stdout.replaceAll("\r\n", "\n")),
    ),
  );
}

describe("releases between Arbeit's clients and arbeit serve", () => {
  let project: UiProject;
  let service: Service;
  let laptop: Checkout;
  let alice: string;
  let dana: string;
  let taskId: string;
  const older = releaseCopy(OLD);
  const newer = releaseCopy(NEW);
  /** Events of `type` on the service's store, read there directly. */
  const events = async (type: string) =>
    (await runCli(["export", "-"], { cwd: project.dir, env: project.env })).stdout
      .split("\n")
      .filter((line) => line.startsWith('{"table":"events"') && line.includes(`"${type}"`));
  /** Claude Code's UserPromptSubmit hook in the laptop's checkout, run by the CLI at `cli`. */
  const promptHook = (prompt: string, cli?: string) =>
    runCli(["hook", "user-prompt-submit"], {
      cwd: laptop.dir,
      input: hookPayload(laptop.dir, SESSION, "UserPromptSubmit", { prompt }),
      env: { ...laptop.env, CLAUDE_PROJECT_DIR: "" },
      ...(cli ? { cli } : {}),
    });

  before(async () => {
    project = await uiProject("sqlite");
    alice = await makeToken(project, ["--agent", "alice"]);
    dana = await makeToken(project, ["--person", "dana", "--read-only", "--expires", "2030-01-31"]);
    service = await startService(project);
    laptop = checkout();
    assert.equal((await laptop.cli(["init", "--server", service.url, "--json"])).code, 0);
    const login = await laptop.cli(["login", service.url, "--token-stdin", "--json"], { input: `${alice}\n` });
    assert.equal(login.code, 0, login.stdout + login.stderr);
    taskId = (await laptop.cli(["task", "create", "Fix the login bug", "--json"])).json.data.task.id;
    await laptop.cli(["task", "create", "Write the release notes", "--json"]);
    const started = await laptop.cli(["task", "start-work", taskId, "--session", SESSION, "--json"]);
    assert.equal(started.code, 0, started.stdout);
  });
  after(async () => {
    await service?.stop("SIGKILL");
    await project?.close();
    laptop?.close();
    older.cleanup();
    newer.cleanup();
  });

  it("/healthz names the service's release and the clients it serves; every answer names the release", async () => {
    const health = await fetch(`${service.url}/healthz`);
    assert.equal(health.headers.get("arbeit-version"), RELEASE);
    assert.deepEqual(((await health.json()) as any).data, {
      ok: true,
      store: "ok",
      version: RELEASE,
      clients: SERVES,
    });
    const refused = await apiCall(service, undefined, { tool: "arbeit_query", args: { query: "ready" } });
    assert.equal(refused.status, 401);
    assert.equal(refused.headers.get("arbeit-version"), RELEASE);
  });

  it("this release's CLI and hooks are served; a hook request naming no release is refused, naming both", async () => {
    const hook = await promptHook("Carry on with the fix");
    assert.equal(hook.code, 0, hook.stderr);
    assert.equal(hook.stderr, "");
    assert.equal((await events("prompt_submitted")).length, 1);
    // A client from before the exchange of versions sends its hook steps without one.
    const bare = await fetch(`${service.url}/api/hook`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${alice}` },
      body: JSON.stringify({
        hook: "user-prompt-submit",
        session: SESSION,
        input: { prompt: { text: "x", chars: 1 } },
      }),
    });
    assert.equal(bare.status, 400);
    const body = (await bare.json()) as any;
    assert.equal(body.error.code, "VERSION_UNSUPPORTED");
    assert.match(
      body.error.message,
      pattern(`service is release ${RELEASE} .*sent no Arbeit-Version, so it is older than ${OLDEST_CLIENT}`),
    );
    assert.deepEqual(body.error.details, {
      service_version: RELEASE,
      clients: SERVES,
      client_version: null,
    });
    assert.equal((await events("prompt_submitted")).length, 1);
  });

  it("curl, scripts and MCP clients, which name no release, are served on /api/call and /mcp", async () => {
    const call = await apiCall(service, alice, { tool: "arbeit_query", args: { query: "ready" } });
    assert.equal(call.status, 200);
    assert.equal(call.body.success, true);
    const mcp = await mcpClient(service, alice);
    try {
      assert.equal((await mcp.call("arbeit_query", { query: "ready" })).success, true);
    } finally {
      await mcp.close();
    }
  });

  it("an older client is refused by name: its call fails, and its Claude Code hook shows the refusal", async () => {
    const call = await runCli(["task", "create", "From the old laptop", "--json"], {
      cwd: laptop.dir,
      env: laptop.env,
      cli: older.cli,
    });
    assert.equal(call.code, 1, call.stdout + call.stderr);
    assert.equal(call.json.error.code, "VERSION_UNSUPPORTED");
    assert.match(call.json.error.message, pattern(`service is release ${RELEASE} .* this client is release ${OLD}`));
    assert.match(call.json.error.suggestions[0], /Upgrade Arbeit in this checkout/);
    const hook = await promptHook("Old prompt", older.cli);
    assert.equal(hook.code, 0);
    const shown = JSON.parse(hook.stdout);
    assert.match(
      shown.systemMessage,
      pattern(`refused the user-prompt-submit hook: .*release ${RELEASE}.*release ${OLD}`),
    );
    assert.equal(shown.hookSpecificOutput.hookEventName, "UserPromptSubmit");
    assert.match(shown.hookSpecificOutput.additionalContext, /Arbeit's hooks record nothing for this session/);
    assert.match(hook.stderr, pattern(`release ${OLD}`));
    const tasks = await runCli(["query", "tasks", "--json"], { cwd: project.dir, env: project.env });
    assert.doesNotMatch(tasks.stdout, /From the old laptop/);
    assert.equal((await events("prompt_submitted")).length, 1);
  });

  it("a client of a newer release line is told to upgrade the service first", async () => {
    const call = await runCli(["query", "ready", "--json"], { cwd: laptop.dir, env: laptop.env, cli: newer.cli });
    assert.equal(call.code, 1);
    assert.equal(call.json.error.code, "VERSION_UNSUPPORTED");
    assert.match(call.json.error.message, pattern(`this client is release ${NEW}`));
    assert.match(call.json.error.suggestions[0], /Upgrade the service first/);
  });

  it("status in the checkout shows the service's release, the token, the tasks by status and who works on what", async () => {
    const status = await laptop.cli(["status", "--json"]);
    assert.equal(status.code, 0, status.stdout + status.stderr);
    assert.deepEqual(status.json.versions, { client: RELEASE, service: RELEASE, clients: SERVES });
    const { remote } = status.json;
    assert.deepEqual(
      { ...remote.token, id: typeof remote.token.id },
      { id: "string", name: "alice", kind: "agent", acts_as: "alice", access: "read-write", expires_at: null },
    );
    assert.deepEqual(remote.tasks, { open: 1, in_progress: 1, completed: 0, cancelled: 0, total: 2 });
    assert.deepEqual(
      remote.working.map((work: any) => [work.task_id, work.agent, work.session_id, work.title]),
      [[taskId, "alice", SESSION, "Fix the login bug"]],
    );
    assert.doesNotMatch(status.stdout, new RegExp(alice));
    const text = { stdout: await statusOnTerminal(laptop.dir, laptop.env) };
    assert.match(
      text.stdout,
      pattern(`Release: the service runs ${RELEASE} (the same as this client); it serves clients ${SERVES}`),
    );
    assert.match(
      text.stdout,
      /Token: {3}stored by arbeit login: alice \(agent, acts as alice, read-write, does not expire\)/,
    );
    assert.match(text.stdout, /Tasks: {3}2 \(1 open, 1 in progress, 0 completed, 0 cancelled\)/);
    assert.match(text.stdout, new RegExp(`${taskId} {2}Fix the login bug {2}\\(alice, session ${SESSION}, since`));
  });

  it("status names a read-only person's token with its expiry, never its secret", async () => {
    const status = await laptop.cli(["status", "--json"], { env: { ARBEIT_TOKEN: dana } });
    assert.equal(status.code, 0, status.stdout);
    assert.equal(status.json.token, "ARBEIT_TOKEN");
    const { id: _, ...who } = status.json.remote.token;
    assert.deepEqual(who, {
      name: "dana",
      kind: "person",
      acts_as: "human:dana",
      access: "read-only",
      expires_at: "2030-01-31T00:00:00.000Z",
    });
    assert.doesNotMatch(status.stdout, new RegExp(dana));
    const anonymous = await fetch(`${service.url}/api/status`);
    assert.equal(anonymous.status, 401);
  });

  it("status from a client the service refuses says why and exits 1", async () => {
    const status = await runCli(["status", "--json"], { cwd: laptop.dir, env: laptop.env, cli: older.cli });
    assert.equal(status.code, 1);
    assert.deepEqual(status.json.versions, { client: OLD, service: RELEASE, clients: SERVES });
    assert.equal(status.json.remote, undefined);
    const [refusal] = status.json.attention;
    assert.equal(refusal.code, "VERSION_UNSUPPORTED");
    assert.match(refusal.message, pattern(`this client is release ${OLD}`));
  });

  it("status against a newer service (which still serves this client) says the service is newer", async () => {
    const upgraded = await startService(project, [], newer.cli);
    try {
      const health = (await (await fetch(`${upgraded.url}/healthz`)).json()) as any;
      assert.equal(health.data.clients, clientRange(NEW).text);
      const env = { ...laptop.env, ARBEIT_URL: upgraded.url, ARBEIT_TOKEN: alice };
      const text = { stdout: await statusOnTerminal(laptop.dir, env) };
      assert.match(text.stdout, pattern(`Release: the service runs ${NEW} (newer than this client, ${RELEASE})`));
      const call = await laptop.cli(["query", "ready", "--json"], {
        env: { ARBEIT_URL: upgraded.url, ARBEIT_TOKEN: alice },
      });
      assert.equal(call.code, 0, call.stdout);
    } finally {
      await upgraded.stop();
    }
  });
});
