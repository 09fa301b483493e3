import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { adminQuery, postgresSkip } from "../helpers/postgres.js";
import { type UiProject, uiProject } from "../ui/harness.js";
import { apiCall, makeToken, type Service, startService } from "./harness.js";

describe("arbeit serve on Postgres, after the database dropped its connections", {
  skip: await postgresSkip(),
}, () => {
  // A name only this test's service connects with: only its connections are cut, never another
  // test run's on the shared database.
  const name = `arbeit_reconnect_${randomBytes(6).toString("hex")}`;
  let project: UiProject;
  let service: Service;
  let alice: string;

  before(async () => {
    project = await uiProject("postgres");
    alice = await makeToken(project, ["--agent", "alice"]);
    const url = new URL(project.env.ARBEIT_DATABASE_URL!);
    url.searchParams.set("application_name", name);
    service = await startService({ ...project, env: { ...project.env, ARBEIT_DATABASE_URL: url.href } });
  });
  after(async () => {
    await service?.stop("SIGKILL");
    await project?.close();
  });

  const create = (title: string) => apiCall(service, alice, { tool: "arbeit_task_create", args: { title } });
  const cut = async () => {
    const result = await adminQuery(
      "SELECT pg_terminate_backend(pid) AS cut FROM pg_stat_activity WHERE application_name = $1",
      [name],
    );
    return result.rowCount ?? 0;
  };

  it("answers the next call without a restart, and the write is stored", async () => {
    assert.equal((await create("Before the cut")).body.success, true);
    assert.ok((await cut()) > 0, "the service's connections were found and cut");
    const after = await create("After the cut");
    assert.equal(after.status, 200);
    assert.equal(after.body.success, true, JSON.stringify(after.body));
    const health = await fetch(`${service.url}/healthz`);
    assert.equal(health.status, 200);
    const titles = (await project.cli(["query", "tasks"])).tasks.map((task: { title: string }) => task.title);
    assert.ok(titles.includes("After the cut"), titles.join(", "));
  });
});
