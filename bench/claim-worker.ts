/**
 * One of the processes of the claim-throughput measurement (claims.ts). Opens the store, says
 * "ready", waits for "go" on stdin, then claims the best ready task `count` times through the
 * catalogue and prints one JSON line: the ids it got and each claim's latency.
 */
import { createInterface } from "node:readline";
import { openHarness } from "./harness.js";

const [dbPath, projectDir, agent, countText] = process.argv.slice(2);
if (!dbPath || !projectDir || !agent || !countText) throw new Error("usage: claim-worker <db> <dir> <agent> <count>");
const count = Number(countText);
const h = await openHarness(dbPath, projectDir);
// Every process is the same agent in a session of its own: claims belong to sessions.
const caller = { agent: "bench-claimer", session: `ses-${agent}` };
// Warm the code paths without claiming anything.
await h.call("arbeit_query", { query: "ready", params: { limit: 1 } }, caller);
process.stdout.write("ready\n");
const lines = createInterface({ input: process.stdin });
for await (const line of lines) if (line.trim() === "go") break;
lines.close();

const claimed: string[] = [];
const latencies: number[] = [];
let empty = 0;
const errors: string[] = [];
for (let i = 0; i < count; i++) {
  const start = process.hrtime.bigint();
  const envelope = await h.call("arbeit_task_claim", { next: true, lease_seconds: 3600 }, caller);
  latencies.push(Number(process.hrtime.bigint() - start) / 1e6);
  if (!envelope.success) errors.push(envelope.error.code);
  else {
    const data = envelope.data as { claimed?: boolean; task?: { id: string } | null };
    if (data.claimed && data.task) claimed.push(data.task.id);
    else empty++;
  }
}
await h.close();
process.stdout.write(`${JSON.stringify({ agent, claimed, latencies, empty, errors })}\n`);
