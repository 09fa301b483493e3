import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { postCall } from "../../src/remote/client.js";
import { runCli } from "../helpers/cli.js";
import { postgresSkip } from "../helpers/postgres.js";
import { type Engine, type UiProject, uiProject } from "../ui/harness.js";
import { apiCall, apiHook, makeToken, promptStep, RELEASE, type Service, startService } from "./harness.js";

/**
 * POST /api/hook (docs/team.md): one step of a host's hook, run with the token's identity. Its
 * body is checked like /api/call's; the sessions it names, parents included, follow the token's
 * session rules, as do /api/call's.
 */
describe("POST /api/hook", () => {
  let project: UiProject;
  let service: Service;
  let alice: string;
  let bob: string;

  const hook = async (token: string, body: unknown) => {
    const response = await fetch(`${service.url}/api/hook`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}`, "Arbeit-Version": RELEASE },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as any };
  };

  before(async () => {
    project = await uiProject("sqlite");
    alice = await makeToken(project, ["--agent", "alice"]);
    bob = await makeToken(project, ["--agent", "bob"]);
    service = await startService(project);
    // bob's session, used first by bob.
    const created = await apiCall(service, bob, {
      tool: "arbeit_task_create",
      args: { title: "Bob's" },
      session: "bob-1",
    });
    const id = created.body.data.task.id;
    assert.equal(
      (await apiCall(service, bob, { tool: "arbeit_task_start_work", args: { task_id: id }, session: "bob-1" })).body
        .success,
      true,
    );
  });
  after(async () => {
    await service?.stop();
    await project?.close();
  });

  it("runs a step and answers its output in the envelope", async () => {
    const answer = await hook(alice, { hook: "session-start", session: "alice-1", input: {} });
    assert.equal(answer.status, 200);
    assert.equal(answer.body.success, true);
    assert.match(JSON.parse(answer.body.data.stdout).hookSpecificOutput.additionalContext, /Arbeit task memory/);
  });

  it("refuses a body that is not a step: 400 with INVALID_ARGUMENT", async () => {
    for (const body of [
      [],
      { hook: 3 },
      { hook: "no-such-step", input: {} },
      { hook: "session-start", list: "no spaces", input: {} },
      { hook: "session-start", input: {}, extra: 1 },
      { hook: "session-start", session: 7, input: {} },
      { hook: "session-start", parents: "x", input: {} },
    ]) {
      const answer = await hook(alice, body);
      assert.deepEqual([answer.status, answer.body.error.code], [400, "INVALID_ARGUMENT"], JSON.stringify(body));
    }
  });

  it("refuses input that is not the step's, and an absolute path, with INVALID_ARGUMENT", async () => {
    for (const input of [
      { touches: "src/a.ts" },
      { touches: [{ path: "/etc/passwd", operation: "read" }] },
      { touches: [{ path: "src/a.ts", operation: "delete" }] },
    ]) {
      const answer = await hook(alice, { hook: "track-files", session: "alice-1", input });
      assert.deepEqual([answer.status, answer.body.error.code], [200, "INVALID_ARGUMENT"], JSON.stringify(input));
    }
  });

  it("a session or a parent another agent has used is FORBIDDEN, on /api/hook and /api/call alike", async () => {
    const asSession = await hook(alice, { hook: "user-prompt-submit", session: "bob-1", input: {} });
    assert.equal(asSession.body.error.code, "FORBIDDEN");
    const asParent = await hook(alice, {
      hook: "track-files",
      session: "bob-1/sub",
      parents: ["bob-1"],
      input: { touches: [{ path: "src/a.ts", operation: "write" }] },
    });
    assert.equal(asParent.body.error.code, "FORBIDDEN");
    const call = await apiCall(service, alice, {
      tool: "arbeit_query",
      args: { query: "ready" },
      session: "alice-2/sub",
      parents: ["bob-1"],
    });
    assert.equal(call.body.error.code, "FORBIDDEN");
    // bob's own sub-agent records on bob's task.
    const own = await hook(bob, {
      hook: "track-files",
      session: "bob-1/sub",
      parents: ["bob-1"],
      input: { touches: [{ path: "src/a.ts", operation: "write" }] },
    });
    assert.equal(own.body.data.results[0].tracked, true, JSON.stringify(own.body));
  });
});

for (const engine of ["sqlite", "postgres"] as Engine[]) {
  describe(`POST /api/hook from a client that sends only hooks (${engine})`, {
    skip: engine === "postgres" ? await postgresSkip() : false,
  }, () => {
    let project: UiProject;
    let service: Service;
    before(async () => {
      project = await uiProject(engine);
      service = await startService(project);
    });
    after(async () => {
      await service?.stop();
      await project?.close();
    });

    it("a token revoked after sending only hooks has its very next hook refused 401, and the hook writes nothing", async () => {
      // What the OpenCode plugin and `arbeit track` do: the service knows the token from its
      // earlier hooks, and no call of another kind reads it again.
      const watcher = await makeToken(project, ["--agent", "watcher"]);
      const prompt = (text: string) => apiHook(service, watcher, promptStep("watcher-1", text));
      for (const text of ["Before 1", "Before 2"]) assert.equal((await prompt(text)).body.success, true);
      const revoked = await runCli(["token", "revoke", "watcher"], { cwd: project.dir, env: project.env });
      assert.equal(revoked.code, 0, revoked.stdout);
      const refused = await prompt("After the revocation");
      assert.deepEqual([refused.status, refused.body.error?.code], [401, "UNAUTHORIZED"], JSON.stringify(refused.body));
      const exported = await runCli(["export", "-"], { cwd: project.dir, env: project.env });
      const prompts = exported.stdout
        .split("\n")
        .filter((line) => line.startsWith('{"table":"events"'))
        .map((line) => JSON.parse(line).row)
        .filter((event) => event.event_type === "prompt_submitted")
        .map((event) => JSON.parse(event.payload).prompt);
      assert.ok(prompts.includes("Before 2"), prompts.join(", "));
      assert.ok(!prompts.includes("After the revocation"), "the refused hook logged its prompt");
    });
  });
}

describe("the client's timeout", () => {
  it("a tool call to a service that never answers is STORE_UNAVAILABLE naming it, after the timeout", async () => {
    const held: Array<() => void> = [];
    const hung = createServer((_req, res) => held.push(() => res.destroy()));
    await new Promise<void>((resolve) => hung.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(hung.address() as AddressInfo).port}`;
    try {
      const envelope = await postCall(url, { tool: "arbeit_query", args: {} }, { ARBEIT_TOKEN: "arb_x" }, 200);
      assert.equal(envelope.success, false);
      if (envelope.success) return;
      assert.equal(envelope.error.code, "STORE_UNAVAILABLE");
      assert.equal(
        envelope.error.message,
        `The Arbeit service at ${url} did not answer within 0.2 s; whether the call took effect is unknown.`,
      );
      assert.equal(held.length, 1);
    } finally {
      for (const release of held) release();
      hung.closeAllConnections();
      await new Promise<void>((resolve) => hung.close(() => resolve()));
    }
  });
});
