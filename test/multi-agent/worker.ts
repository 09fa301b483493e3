/**
 * One of the OS processes in the multi-process test. It talks to the shared database either
 * through the library (one long-lived service) or through the real CLI (a process per call),
 * and prints one JSON line per call it made so the parent can check every acknowledged write.
 *
 * Every process acts as the same agent ("worker"), each in a session of its own (ses-<id>): claims
 * belong to sessions, so processes sharing an agent name must still never share a claim.
 *
 *   node <workerScript()> <library|cli> <project-dir> <id> <phase> [appends]
 *
 * Phases: "claim" (claim the best ready task until none is left), "call" (one call, given as
 * {tool, args} JSON in WORKER_CALL), or a task id (append tokens to its description).
 * WORKER_CLOCK_MS shifts this process's own clock (library mode): leases must not care.
 * WORKER_AT_GATE (library mode): open the store first, say "at the gate" on stderr, and make the
 * call when the parent writes a line to stdin, so that processes started one after another still race.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { ArbeitService } from "../../src/service/arbeit-service.js";
import type { Envelope } from "../../src/tools/envelope.js";

// The built library (dist/), as an installed package runs it: this file runs compiled to plain
// JavaScript (worker-script.ts), where starting through a TypeScript loader cost three times the
// processor time, in every one of the dozens of processes a test starts. The types are src/'s.
const DIST = process.env.WORKER_DIST!;
const lib = <T>(path: string): Promise<T> => import(pathToFileURL(join(DIST, path)).href);
const { openProject } = await lib<typeof import("../../src/service/project.js")>("service/project.js");
const { findTool } = await lib<typeof import("../../src/tools/catalogue.js")>("tools/catalogue.js");
const { invokeTool } = await lib<typeof import("../../src/tools/envelope.js")>("tools/envelope.js");
const CLI = join(DIST, "cli", "main.js");

const [mode, dir, agent, phase, appendsArg] = process.argv.slice(2) as [string, string, string, string, string?];
export const WORKER_AGENT = "worker";
const caller = { agent: WORKER_AGENT, session: `ses-${agent}` };
const clockShift = Number(process.env.WORKER_CLOCK_MS ?? 0);
let service: ArbeitService | undefined;
let counter = 0;

async function call(tool: string, args: Record<string, unknown>): Promise<{ envelope: Envelope<any>; raw: string }> {
  if (mode === "cli") {
    const result = spawnSync(
      process.execPath,
      [CLI, "call", tool, JSON.stringify(args), "--agent", WORKER_AGENT, "--session", caller.session],
      {
        cwd: dir,
        encoding: "utf8",
      },
    );
    if (result.stdout.trim() === "") throw new Error(`CLI printed nothing (exit ${result.status}): ${result.stderr}`);
    return { envelope: JSON.parse(result.stdout), raw: result.stdout.trimEnd() };
  }
  service ??= await openProject({ cwd: dir, now: () => new Date(Date.now() + clockShift) });
  const s = service;
  const envelope = (await invokeTool(findTool(tool)!, args, {
    caller,
    cwd: dir,
    service: async () => s,
  })) as Envelope<any>;
  return { envelope, raw: JSON.stringify(envelope) };
}

function report(line: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

async function claimUntilNoneLeft(): Promise<void> {
  for (;;) {
    const args = { next: true, request_id: `${agent}-claim-${counter++}` };
    const { envelope, raw } = await call("arbeit_task_claim", args);
    report({
      tool: "arbeit_task_claim",
      args,
      raw,
      success: envelope.success,
      code: envelope.success ? null : envelope.error.code,
    });
    if (!envelope.success || !envelope.data.claimed) return;
  }
}

/** Appends this agent's tokens to a shared list with optimistic concurrency, retrying conflicts. */
async function appendTokens(taskId: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const token = `${agent}:${i}`;
    for (;;) {
      const read = await call("arbeit_task_get", { task_id: taskId });
      const current = (read.envelope as { data: { task: { description: string | null; version: number } } }).data.task;
      const list = JSON.parse(current.description ?? "[]") as string[];
      const args = {
        task_id: taskId,
        description: JSON.stringify([...list, token]),
        expected_version: current.version,
        request_id: `${agent}-append-${counter++}`,
      };
      const { envelope, raw } = await call("arbeit_task_update", args);
      report({
        tool: "arbeit_task_update",
        args,
        raw,
        success: envelope.success,
        code: envelope.success ? null : envelope.error.code,
        token,
      });
      if (envelope.success) break;
      if (envelope.error.code !== "VERSION_CONFLICT") return;
    }
  }
}

async function callOnce(): Promise<void> {
  const { tool, args } = JSON.parse(process.env.WORKER_CALL ?? "{}") as { tool: string; args: Record<string, unknown> };
  if (process.env.WORKER_AT_GATE) {
    service ??= await openProject({ cwd: dir, now: () => new Date(Date.now() + clockShift) });
    await service.query({ query: "reservations" }, caller);
    process.stderr.write("at the gate\n");
    await new Promise((resolve) => process.stdin.once("data", resolve).once("end", resolve));
  }
  const { envelope, raw } = await call(tool, args);
  report({ tool, args, raw, success: envelope.success, code: envelope.success ? null : envelope.error.code });
}

if (phase === "claim") await claimUntilNoneLeft();
else if (phase === "call") await callOnce();
else await appendTokens(phase, Number(appendsArg ?? 5));
await service?.close();
