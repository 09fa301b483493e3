import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { postgresSkip } from "../helpers/postgres.js";
import { type Checkout, checkout } from "../remote/harness.js";
import { type Engine, type UiProject, uiProject } from "../ui/harness.js";
import { apiCall, makeToken, type Service, startService } from "./harness.js";

/**
 * CI closes a task when its pull request merges, while the agent that did the work may still hold
 * the claim: a CI token (`arbeit token create --ci NAME`) finishes it by naming where the work
 * landed (landed_ref), logged as CI's. Other agents, and CI without the ref, still meet the claim;
 * a read-only CI token writes nothing; force stays a person's.
 */
for (const engine of ["sqlite", "postgres"] as Engine[]) {
  describe(`CI finishes a task whose work landed, on ${engine}`, {
    skip: engine === "postgres" ? await postgresSkip() : false,
  }, () => {
    let project: UiProject;
    let service: Service;
    let runner: Checkout;
    let bob: string;
    let mallory: string;
    let ci: string;
    let ciReader: string;
    let taskId: string;
    const SHA = "4f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39";

    before(async () => {
      project = await uiProject(engine);
      bob = await makeToken(project, ["--agent", "bob"]);
      mallory = await makeToken(project, ["--agent", "mallory"]);
      ci = await makeToken(project, ["--ci", "github"]);
      ciReader = await makeToken(project, ["--ci", "reader", "--read-only"]);
      service = await startService(project);
      runner = checkout();
      const created = await apiCall(service, bob, {
        tool: "arbeit_task_create",
        args: { title: "Add the retry" },
        session: "bob-1",
      });
      taskId = created.body.data.task.id;
      const started = await apiCall(service, bob, {
        tool: "arbeit_task_start_work",
        args: { task_id: taskId },
        session: "bob-1",
      });
      assert.equal(started.body.success, true, JSON.stringify(started.body));
    });
    after(async () => {
      await service?.stop("SIGKILL");
      runner?.close();
      await project?.close();
    });

    /** `arbeit call arbeit_task_update` run by the CI job: a real CLI process pointed at the service. */
    const ciUpdate = async (token: string, args: Record<string, unknown>) =>
      runner.cli(["call", "arbeit_task_update", JSON.stringify({ task_id: taskId, ...args }), "--json"], {
        env: { ARBEIT_URL: service.url, ARBEIT_TOKEN: token, ARBEIT_SESSION: "ci-run-1" },
      });
    const status = async () =>
      (await apiCall(service, bob, { tool: "arbeit_task_get", args: { task_id: taskId } })).body.data.task.status;

    it("another agent, and CI without landed_ref or with force, meet the claim; a read-only CI token is refused", async () => {
      const other = await apiCall(service, mallory, {
        tool: "arbeit_task_update",
        args: { task_id: taskId, status: "completed", landed_ref: SHA },
        session: "mallory-1",
      });
      assert.equal(other.body.error?.code, "ALREADY_CLAIMED");
      const bare = await ciUpdate(ci, { status: "completed" });
      assert.equal(bare.json.error?.code, "ALREADY_CLAIMED", bare.stdout + bare.stderr);
      const forced = await ciUpdate(ci, { status: "completed", force: true });
      assert.equal(forced.json.error?.code, "FORBIDDEN");
      const more = await ciUpdate(ci, { status: "completed", title: "Renamed", landed_ref: SHA });
      assert.equal(more.json.error?.code, "ALREADY_CLAIMED");
      const notFinishing = await ciUpdate(ci, { priority: 1, landed_ref: SHA });
      assert.equal(notFinishing.json.error?.code, "INVALID_ARGUMENT");
      const reader = await ciUpdate(ciReader, { status: "completed", landed_ref: SHA });
      assert.equal(reader.json.error?.code, "FORBIDDEN");
      assert.equal(await status(), "in_progress");
    });

    it("a CI token finishes it with landed_ref: the claim is broken and the completion logged as CI's, with the ref", async () => {
      const done = await ciUpdate(ci, { status: "completed", landed_ref: SHA });
      assert.equal(done.code, 0, done.stdout + done.stderr);
      assert.equal(done.json.data.task.status, "completed");
      assert.equal(done.json.data.task.claim_session ?? null, null);
      const events = (
        await apiCall(service, bob, {
          tool: "arbeit_query",
          args: { query: "events", params: { task_id: taskId, limit: 50 } },
        })
      ).body.data.events;
      const released = events.find((e: any) => e.event_type === "claim_released");
      assert.deepEqual(
        [released.agent, released.session_id, released.payload.reason, released.payload.session],
        ["ci:github", "ci-run-1", "forced", "bob-1"],
      );
      const updated = events.filter((e: any) => e.event_type === "task_updated").at(-1);
      assert.equal(updated.agent, "ci:github");
      assert.equal(updated.payload.landed_ref, SHA);
      assert.deepEqual(updated.payload.changes.status, { from: "in_progress", to: "completed" });
      assert.match(updated.payload.token_id, /^tok-[a-z0-9]{8}$/);
    });
  });
}
