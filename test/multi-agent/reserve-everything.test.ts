import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";

/**
 * What one session may hold: an exclusive reservation must leave other sessions something to
 * edit, so a pattern every file of the project matches (`**`, `/`, `./`, `**\/*`, `*\/**`) is
 * refused with RESERVATION_TOO_BROAD and nothing of the call is reserved. The same pattern shared,
 * a folder, or the top-level files (`*`) may be held.
 */

describe("reserving every file of the project", () => {
  let dir: string;
  let cleanup: () => void;

  const call = async (session: string, input: object) =>
    (await runCli(["call", "arbeit_task_claim", JSON.stringify(input), "--session", session, "--json"], { cwd: dir }))
      .json;
  const check = async (session: string, path: string) =>
    (await runCli(["check-edit", path, "--session", session, "--json"], { cwd: dir })).json.data.decision;

  before(async () => {
    ({ dir, cleanup } = tempDir("arbeit-everything-"));
    assert.equal((await runCli(["init"], { cwd: dir })).code, 0);
  });
  after(() => cleanup());

  for (const pattern of ["**", "/", "./", "**/*", "*/**", "/**/", "**/**"])
    it(`refuses ${JSON.stringify(pattern)} exclusively with RESERVATION_TOO_BROAD, reserving nothing`, async () => {
      const out = await call("ses-greedy", { paths: ["src/auth/session.ts", pattern] });
      assert.equal(out.success, false, JSON.stringify(out));
      assert.equal(out.error.code, "RESERVATION_TOO_BROAD");
      assert.match(out.error.message, /every file of the project/);
      assert.deepEqual(out.error.details, { field: "paths", path: pattern });
      assert.equal(await check("ses-other", "src/auth/session.ts"), "allow");
      assert.equal(await check("ses-other", "README.md"), "allow");
    });

  it("lets the same pattern be held shared, and a folder or the top-level files exclusively", async () => {
    const shared = await call("ses-wide", { paths: ["**"], shared: true });
    assert.equal(shared.success, true, JSON.stringify(shared));
    assert.equal(await check("ses-other", "src/a.ts"), "warn");
    assert.equal((await call("ses-wide", { action: "release", paths: ["**"] })).success, true);
    const held = await call("ses-narrow", { paths: ["src/auth/**", "*"] });
    assert.equal(held.success, true, JSON.stringify(held));
    assert.deepEqual(
      held.data.reserved.map((r: any) => r.pattern),
      ["src/auth/**", "*"],
    );
    assert.equal(await check("ses-other", "src/auth/session.ts"), "deny");
    assert.equal(await check("ses-other", "package.json"), "deny");
  });
});
