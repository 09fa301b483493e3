import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { tempDir } from "../helpers/temp.js";
import { type CliProject, cliProject } from "./support.js";

/**
 * `arbeit track <path>`: a file read or write is recorded against the task the
 * session is working on, only while it works on one, and only inside the project.
 */
describe("arbeit track", () => {
  let project: CliProject;
  let taskId: string;
  const session = { env: { ARBEIT_SESSION: "tracking" } };
  const files = async () => (await project.ok(["query", "files_for_task", "--task-id", taskId])).files;

  before(async () => {
    project = await cliProject();
    mkdirSync(join(project.dir, "src", "auth"), { recursive: true });
    writeFileSync(join(project.dir, "src", "auth", "session.ts"), "export {};\n");
    writeFileSync(join(project.dir, "README.md"), "# x\n");
    taskId = (await project.ok(["task", "create", "Track files"])).task.id;
  });
  after(() => project.cleanup());

  it("records nothing while the session has no active work", async () => {
    const data = await project.ok(["track", "README.md"], session);
    assert.deepEqual(data, { tracked: false, reason: "no_active_work", file_path: "README.md" });
    assert.deepEqual(await files(), []);
  });

  it("records writes (the default) and reads against the active task", async () => {
    await project.ok(["task", "start", taskId], session);
    const write = await project.ok(["track", "src/auth/session.ts"], session);
    assert.deepEqual(write, { tracked: true, task_id: taskId, file_path: "src/auth/session.ts", operation: "write" });
    const read = await project.ok(["track", "README.md", "--op", "read"], session);
    assert.equal(read.operation, "read");
    assert.deepEqual(
      (await files())
        .map((file: { file_path: string; operations: string[] }) => [file.file_path, file.operations])
        .sort(),
      [
        ["README.md", ["read"]],
        ["src/auth/session.ts", ["write"]],
      ],
    );
  });

  it("resolves a relative path from the current directory and stores it relative to the root", async () => {
    const data = await project.ok(["track", "session.ts", "--op", "read"], {
      ...session,
      cwd: join(project.dir, "src", "auth"),
    });
    assert.equal(data.file_path, "src/auth/session.ts");
    const { tasks } = await project.ok(["query", "tasks_for_file", "--file-path", "src/auth/session.ts"]);
    assert.deepEqual(
      tasks.map((task: { id: string; operations: string[] }) => [task.id, [...task.operations].sort()]),
      [[taskId, ["read", "write"]]],
    );
  });

  it("records the same path and operation once per session", async () => {
    const again = await project.ok(["track", "README.md", "--op", "read"], session);
    assert.equal(again.tracked, false);
    assert.equal(again.reason, "already_tracked");
  });

  it("ignores paths outside the project", async () => {
    const { dir: outside, cleanup } = tempDir();
    try {
      writeFileSync(join(outside, "secret.txt"), "x");
      const data = await project.ok(["track", join(outside, "secret.txt")], session);
      assert.deepEqual(data, { tracked: false, reason: "outside_project" });
      assert.equal((await project.ok(["track", "../../etc/passwd", "--op", "read"], session)).tracked, false);
    } finally {
      cleanup();
    }
  });

  it("does not record for another session, which has no active work", async () => {
    const data = await project.ok(["track", "src/auth/session.ts", "--session", "someone-else"]);
    assert.equal(data.reason, "no_active_work");
  });

  it("stops recording once work stops, and stop-work counts what was tracked", async () => {
    const stopped = await project.ok(["task", "stop", taskId], session);
    assert.deepEqual(stopped, { stopped: true, files_tracked: 2, claim_released: true });
    writeFileSync(join(project.dir, "later.ts"), "x");
    const data = await project.ok(["track", "later.ts"], session);
    assert.equal(data.reason, "no_active_work");
    assert.equal((await files()).length, 2);
  });

  it("rejects an operation other than read or write as a usage error", async () => {
    const result = await project.run(["track", "README.md", "--op", "delete"], session);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /--op is read or write/);
  });
});
