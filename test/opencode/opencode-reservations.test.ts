import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { runCli } from "../helpers/cli.js";
import { hostMissing } from "../helpers/hosts.js";
import { requirement } from "../helpers/requirements.js";
import { type ChatRequest, type FakeModel, type Reply, startFakeModel, textOf, toolHistory } from "./fake-model.js";
import {
  createSandbox,
  type OpencodeRun,
  type OpencodeSandbox,
  opencodeConfig,
  REPO,
  runOpencode,
  seedConfigDir,
} from "./harness.js";

/**
 * File reservations enforced in the real OpenCode (docs/opencode.md): two sub-agents at once,
 * each on its own task. The holder starts work and reserves `src/auth/**` exclusively; the
 * editor's `write` of `src/auth/limits.ts` is then refused by the plugin's `tool.execute.before`,
 * with the holder's session and task named, and the file is not created. Once the holder stops
 * its work (its reservations go with it), the editor's same write goes through.
 */

const RUN_TIMEOUT_MS = 120_000;
const WAIT_MS = 60_000;
const PROMPT = "Split the auth work between two sub-agents";
const HOLDER = "HOLDER-SUBAGENT-MARKER";
const EDITOR = "EDITOR-SUBAGENT-MARKER";
const FILE = "src/auth/limits.ts";
const CONTENT = "export const limit = 5;\n";

const cannotRun = requirement("the real-opencode reservations test", hostMissing("opencode"));

const firstUserText = (request: ChatRequest) =>
  textOf(request.messages.find((message) => message.role === "user") ?? { role: "user" });

/** A point the other sub-agent waits for; false when it never came within WAIT_MS. */
function signal() {
  let fire!: () => void;
  const fired = new Promise<boolean>((resolve) => {
    fire = () => resolve(true);
    setTimeout(() => resolve(false), WAIT_MS).unref();
  });
  return { fire, wait: () => fired };
}

describe("OpenCode, real binary: a sub-agent's exclusive reservation refuses the other sub-agent's write", {
  skip: cannotRun,
}, () => {
  let sandbox: OpencodeSandbox;
  let model: FakeModel;
  let run: OpencodeRun;
  const tasks: Record<string, string> = {};
  const reserved = signal();
  const refused = signal();
  const stopped = signal();
  /** The two write results the editor saw, in order, and whether the file existed after the first. */
  const writes: string[] = [];
  let existedAfterRefusal: boolean | undefined;

  after(async () => {
    await model?.close();
    sandbox?.cleanup();
  });

  it("refuses the write naming the holder, creates nothing, then lets it through once the holder stops", {
    timeout: RUN_TIMEOUT_MS + 60_000,
  }, async () => {
    sandbox = createSandbox();
    const project = sandbox.project;
    mkdirSync(join(project, "node_modules"));
    symlinkSync(REPO, join(project, "node_modules", "arbeit"), "dir");
    mkdirSync(join(project, "src", "auth"), { recursive: true });
    writeFileSync(join(project, "opencode.json"), JSON.stringify(opencodeConfig(), null, 2));
    seedConfigDir(join(project, ".opencode"));
    const arbeit = async (args: string[]) => {
      const result = await runCli(args, { cwd: project, env: { HOME: sandbox.home } });
      assert.equal(result.code, 0, `arbeit ${args.join(" ")}: ${result.stderr}${result.stdout}`);
      return result.json;
    };
    assert.equal((await arbeit(["setup", "opencode", "--json"])).success, true);
    tasks.holder = (await arbeit(["task", "create", "Rework sessions", "--json"])).data.task.id;
    tasks.editor = (await arbeit(["task", "create", "Rate limits", "--json"])).data.task.id;

    model = await startFakeModel(async (request): Promise<Reply> => {
      if (!request.tools?.length) return { text: "Auth work" };
      const calls = toolHistory(request);
      const count = (name: string) => calls.filter((call) => call.name === name).length;
      const first = firstUserText(request);
      if (first.includes(HOLDER)) {
        if (!count("arbeit_task_start_work"))
          return { tool: "arbeit_task_start_work", args: { task_id: tasks.holder } };
        if (!count("arbeit_task_claim"))
          return { tool: "arbeit_task_claim", args: { task_id: tasks.holder, paths: ["src/auth/**"] } };
        if (!count("arbeit_task_stop_work")) {
          reserved.fire();
          await refused.wait();
          return { tool: "arbeit_task_stop_work", args: { task_id: tasks.holder } };
        }
        stopped.fire();
        return { text: `${HOLDER} finished.` };
      }
      if (first.includes(EDITOR)) {
        if (!count("arbeit_task_start_work"))
          return { tool: "arbeit_task_start_work", args: { task_id: tasks.editor } };
        const written = calls.filter((call) => call.name === "write");
        if (written.length === 0) {
          await reserved.wait();
          return { tool: "write", args: { filePath: join(project, FILE), content: CONTENT } };
        }
        if (written.length === 1) {
          writes.push(written[0]!.result);
          existedAfterRefusal = existsSync(join(project, FILE));
          refused.fire();
          await stopped.wait();
          return { tool: "write", args: { filePath: join(project, FILE), content: CONTENT } };
        }
        writes.push(written[1]!.result);
        return { text: `${EDITOR} finished.` };
      }
      if (!calls.some((call) => call.name === "task"))
        return {
          tools: [HOLDER, EDITOR].map((marker) => ({
            tool: "task",
            args: {
              description: `Auth work ${marker.split("-")[0]}`,
              prompt: `${marker}: do your part.`,
              subagent_type: "general",
            },
          })),
        };
      return { text: "Both sub-agents are done." };
    });
    run = await runOpencode(sandbox, PROMPT, { port: model.port, timeoutMs: RUN_TIMEOUT_MS });
    assert.equal(run.timedOut, false, `opencode did not finish\n${run.stderr}`);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(model.errors, []);

    // The holder's child session, from its claim's answer.
    const holderClaim = model.requests
      .filter((request) => firstUserText(request).includes(HOLDER))
      .flatMap((request) => toolHistory(request))
      .find((call) => call.name === "arbeit_task_claim" && call.result);
    const holderSession = JSON.parse(holderClaim!.result).data.reserved[0].session as string;
    assert.match(holderSession, /^ses_/);

    assert.equal(writes.length, 2, JSON.stringify(writes));
    assert.match(writes[0]!, /src\/auth\/limits\.ts is reserved exclusively by general/);
    assert.ok(writes[0]!.includes(`session ${holderSession}`), writes[0]);
    assert.ok(writes[0]!.includes(`task ${tasks.holder}`), writes[0]);
    assert.match(writes[0]!, /until \d{4}-\d\d-\d\dT/);
    assert.equal(existedAfterRefusal, false, "the refused write created the file");
    assert.doesNotMatch(writes[1]!, /reserved/);
    assert.equal(readFileSync(join(project, FILE), "utf8"), CONTENT);
  });
});
