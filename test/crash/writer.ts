import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

/**
 * A child process that writes to a project through the library (the built dist/, as an installed
 * package would run) in an endless loop, printing one line per acknowledged write only after the
 * tool said success: `task <id>`, `context <id>`, `progress <id,id>`, `completed <id>`,
 * `memory <key>`. Lines go out with writeSync, so a line on stdout always means a committed write.
 */
export const DIST = fileURLToPath(new URL("../../dist/", import.meta.url));

const SCRIPT = `
import { writeSync } from "node:fs";
const [dist, dir, agent] = process.argv.slice(1);
const { openProject } = await import(dist + "service/project.js");
const { findTool } = await import(dist + "tools/catalogue.js");
const { invokeTool } = await import(dist + "tools/envelope.js");
const service = await openProject({ cwd: dir });
const ctx = { caller: { session: "ses-" + agent, agent }, cwd: dir, service: async () => service };
const call = (name, args) => invokeTool(findTool(name), args, ctx);
const ack = (line) => writeSync(1, line + "\\n");
ack("ready");
let previous = null;
for (let i = 0; ; i++) {
  const created = await call("arbeit_task_create", {
    title: agent + " task " + i,
    ...(previous && i % 3 === 0 ? { blocked_by: [previous] } : {}),
  });
  if (!created.success) { ack("error " + JSON.stringify(created.error)); continue; }
  const id = created.data.task.id;
  ack("task " + id);
  const context = await call("arbeit_context_add", { task_id: id, type: "note", content: "note " + i });
  if (context.success) ack("context " + context.data.entry.id);
  const progress = await call("arbeit_progress_add", { task_id: id, items: ["first", "second"] });
  if (progress.success) ack("progress " + progress.data.items.map((item) => item.id).join(","));
  if (i % 4 === 1) {
    const done = await call("arbeit_task_update", { task_id: id, status: "completed" });
    if (done.success) ack("completed " + id);
  }
  if (i % 5 === 2) {
    const key = agent + "-" + i;
    const memory = await call("arbeit_memory", { action: "set", key, value: { i } });
    if (memory.success) ack("memory " + key);
  }
  previous = id;
}
`;

export interface Writer {
  child: ChildProcess;
  /** Every acknowledged line so far. */
  acks: string[];
  /** Resolves once the writer has opened the store and is about to write. */
  ready: Promise<void>;
  exited: Promise<number | null>;
}

export function startWriter(dir: string, agent: string): Writer {
  const child = spawn(process.execPath, ["--input-type=module", "-e", SCRIPT, DIST, dir, agent], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const acks: string[] = [];
  let buffer = "";
  let markReady!: () => void;
  const ready = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  let stderr = "";
  child.stderr!.on("data", (chunk) => (stderr += chunk));
  child.stdout!.on("data", (chunk) => {
    buffer += chunk;
    const lines = buffer.split("\n");
    buffer = lines.pop()!;
    for (const line of lines) {
      if (line === "ready") markReady();
      else acks.push(line);
    }
  });
  const exited = new Promise<number | null>((resolve) =>
    child.on("close", (code) => {
      markReady();
      if (code !== null && code !== 0) acks.push(`crashed ${code}: ${stderr}`);
      resolve(code);
    }),
  );
  return { child, acks, ready, exited };
}
