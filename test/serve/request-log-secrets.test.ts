import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type UiProject, uiProject } from "../ui/harness.js";
import { makeToken, type Service, startService } from "./harness.js";

/**
 * The request log of `arbeit serve` is kept and read by whoever runs the service. A token sent
 * where it does not belong (in a path's query, as a tool's name) is written there redacted.
 */
describe("the request log of arbeit serve and tokens sent in the wrong place", () => {
  let project: UiProject;
  let service: Service;
  let alice: string;

  before(async () => {
    project = await uiProject("sqlite");
    alice = await makeToken(project, ["--agent", "alice"]);
    service = await startService(project);
  });
  after(async () => {
    await service?.stop("SIGKILL");
    await project?.close();
  });

  it("writes arb_[redacted] for a token in a path or a tool's name", async () => {
    const headers = { Authorization: `Bearer ${alice}`, "Content-Type": "application/json" };
    await (await fetch(`${service.url}/api/home?token=${alice}`, { headers })).arrayBuffer();
    const call = { tool: `arbeit_query ${alice}`, args: {} };
    await (
      await fetch(`${service.url}/api/call`, { method: "POST", headers, body: JSON.stringify(call) })
    ).arrayBuffer();
    let log = "";
    for (let waited = 0; waited < 5_000; waited += 20) {
      log = service.stderr();
      if (log.split("\n").filter((line) => line.includes("arb_[redacted]")).length >= 2) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.ok(!log.includes(alice), log);
    assert.match(log, /\/api\/home\?token=arb_\[redacted\]/);
    assert.match(log, /arbeit_query arb_\[redacted\]/);
  });
});
