import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { after, before, describe, it } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ChildTransport } from "../helpers/child-transport.js";
import { ARBEIT_SETTINGS, CLI, runCli } from "../helpers/cli.js";
import { postgresSkip } from "../helpers/postgres.js";
import { makeToken, type Service, startService } from "../serve/harness.js";
import { type Engine, type UiProject, uiProject } from "../ui/harness.js";
import { type Checkout, type CountingProxy, checkout, countingProxy } from "./harness.js";

/**
 * A restart of `arbeit serve` (an upgrade, a crash) loses no write it acknowledged, and the
 * checkouts pointed at it carry on by themselves: every call is a request of its own, so the
 * first call after the restart is answered like any other, with nothing to reconnect or redo.
 */
for (const engine of ["sqlite", "postgres"] as Engine[]) {
  describe(`clients of arbeit serve across a restart of the service (${engine} behind it)`, {
    skip: engine === "postgres" ? await postgresSkip() : false,
  }, () => {
    let project: UiProject;
    let service: Service;
    let proxy: CountingProxy;
    let laptop: Checkout;
    let client: Client | undefined;

    before(async () => {
      project = await uiProject(engine);
      const alice = await makeToken(project, ["--agent", "alice"]);
      service = await startService(project);
      // The service's public address stays; the process behind it changes.
      proxy = await countingProxy(service.url);
      laptop = checkout();
      assert.equal((await laptop.cli(["init", "--server", proxy.url, "--json"])).code, 0);
      const login = await laptop.cli(["login", proxy.url, "--token-stdin", "--json"], { input: `${alice}\n` });
      assert.equal(login.code, 0, login.stdout + login.stderr);
    });
    after(async () => {
      await client?.close();
      await proxy?.close();
      await service?.stop("SIGKILL");
      await project?.close();
      laptop?.close();
    });

    it("keeps every acknowledged write, and arbeit mcp and the CLI go on without being restarted", async () => {
      const env: NodeJS.ProcessEnv = { ...process.env, ...laptop.env };
      for (const key of ARBEIT_SETTINGS) delete env[key];
      const child = spawn(process.execPath, [CLI, "mcp"], { cwd: laptop.dir, env, stdio: ["pipe", "pipe", "pipe"] });
      client = new Client({ name: "restart-test", version: "1.0.0" });
      await client.connect(new ChildTransport(child));
      const create = async (title: string) =>
        ((await client!.callTool({ name: "arbeit_task_create", arguments: { title } })) as { structuredContent?: any })
          .structuredContent;
      const before = await create("Acknowledged before the restart");
      assert.equal(before.success, true, JSON.stringify(before));
      const fromCli = await laptop.cli(["task", "create", "From the CLI before the restart", "--json"]);
      assert.equal(fromCli.code, 0, fromCli.stdout + fromCli.stderr);

      // Killed, not drained: what was acknowledged must already be stored.
      assert.equal(await service.stop("SIGKILL"), "SIGKILL");
      service = await startService(project);
      proxy.retarget(service.url);

      const after = await create("Written after the restart");
      assert.equal(after.success, true, JSON.stringify(after));
      for (const id of [before.data.task.id, fromCli.json.data.task.id, after.data.task.id]) {
        const got = await laptop.cli(["task", "get", id, "--json"]);
        assert.equal(got.code, 0, got.stdout + got.stderr);
      }
      const direct = await runCli(["task", "get", before.data.task.id, "--json"], {
        cwd: project.dir,
        env: project.env,
      });
      assert.equal(direct.json.data.task.title, "Acknowledged before the restart");
      const doctor = await runCli(["doctor", "--json"], { cwd: project.dir, env: project.env });
      assert.equal(doctor.code, 0, doctor.stdout);
    });
  });
}
