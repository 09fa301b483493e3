import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";

/**
 * The least a claim can cost on this machine's Postgres: `workers` processes each claim the best
 * open, unleased, unblocked task with one statement (lock it, lease it, log the event; its own
 * transaction, so one round trip and one commit), nothing else: no checks, no other sessions'
 * work, no envelope. What the 8 bench processes reach this way is the ceiling any claim through
 * Arbeit could reach on these cores, since Postgres and the claiming processes share them.
 */
const CLAIM = `WITH best AS (
    SELECT t.id FROM tasks t
    WHERE t.deleted_at IS NULL AND t.status = 'open' AND t.lease_expires_at IS NULL
      AND t.open_children = 0 AND t.open_blockers = 0
    ORDER BY t.priority, t.created_at, t.id LIMIT 1 FOR UPDATE SKIP LOCKED),
  leased AS (
    UPDATE tasks SET owner = 'bench-floor', claim_session = $1, lease_expires_at = $2, version = version + 1
    FROM best WHERE tasks.id = best.id RETURNING tasks.id)
  INSERT INTO events (id, timestamp, event_type, entity_type, entity_id, task_id, payload, session_id, agent)
  SELECT $3, $4, 'task_claimed', 'task', leased.id, leased.id, '{}', $1, 'bench-floor' FROM leased`;

interface FloorReport {
  claims: number;
  /** Client CPU per claim, ms. */
  cpu: number;
}

async function worker(url: string, schema: string, name: string, count: number): Promise<void> {
  const { default: pg } = await import("pg");
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(`SET search_path TO "${schema}"`);
  process.send!("ready");
  await new Promise((resolve) => process.once("message", resolve));
  const cpu = process.cpuUsage();
  let claims = 0;
  for (let i = 0; i < count; i++) {
    const now = new Date();
    const until = new Date(now.getTime() + 3_600_000).toISOString();
    const answer = await client.query({
      name: "floor_claim",
      text: CLAIM,
      values: [`ses-${name}`, until, `evt-${name}-${i}`, now.toISOString()],
    });
    claims += answer.rowCount ?? 0;
  }
  const used = process.cpuUsage(cpu);
  process.send!({ claims, cpu: (used.user + used.system) / 1000 / count } satisfies FloorReport);
  await client.end();
}

/** Bare claims per second from `workers` processes at once, and the client CPU each took. */
export async function bareClaimRate(
  url: string,
  schema: string,
  workers: number,
  perWorker: number,
): Promise<{ rate: number; claims: number; clientCpuMs: number }> {
  const self = fileURLToPath(import.meta.url);
  const children = Array.from({ length: workers }, (_, i) =>
    fork(self, ["floor-worker", url, schema, `bench-floor-${i + 1}`, String(perWorker)]),
  );
  const first = (child: (typeof children)[number]) =>
    new Promise<unknown>((resolve, reject) => {
      child.once("message", resolve);
      child.once("exit", (code) => reject(new Error(`floor worker exited with ${code}`)));
    });
  await Promise.all(children.map(first));
  const reports = children.map((child) => first(child) as Promise<FloorReport>);
  const start = process.hrtime.bigint();
  for (const child of children) child.send("go");
  const done = await Promise.all(reports);
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const claims = done.reduce((sum, report) => sum + report.claims, 0);
  // Undone, so that what is measured after the claims sees only the claim run's own.
  const { default: pg } = await import("pg");
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`SET search_path TO "${schema}"`);
    await client.query("DELETE FROM events WHERE agent = 'bench-floor'");
    await client.query(
      "UPDATE tasks SET owner = NULL, claim_session = NULL, lease_expires_at = NULL WHERE owner = 'bench-floor'",
    );
  } finally {
    await client.end();
  }
  return {
    rate: claims / seconds,
    claims,
    clientCpuMs: done.reduce((sum, report) => sum + report.cpu, 0) / done.length,
  };
}

if (process.argv[2] === "floor-worker") {
  const [, , , url, schema, name, count] = process.argv;
  await worker(url!, schema!, name!, Number(count));
}
