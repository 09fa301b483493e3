import type { SqlDb } from "../store/sql/database.js";
import {
  applyEvent,
  edgeKey,
  emptyReplay,
  REPLAYED_TASK_FIELDS,
  type ReplayEvent,
  type ReplayState,
} from "./replay.js";

export interface Finding {
  message: string;
  [detail: string]: unknown;
}

const EVENT_PAGE = 1000;
const SHOWN_CHARS = 120;

/** Replays every event in seq order. Call inside one read transaction. */
export async function replayLog(db: SqlDb): Promise<ReplayState> {
  const state = emptyReplay();
  const page =
    "SELECT seq, timestamp, event_type, entity_id, task_id, payload FROM events WHERE seq > ? ORDER BY seq LIMIT ?";
  let after = 0;
  for (;;) {
    const rows = (await db.all(page, after, EVENT_PAGE)) as Array<Omit<ReplayEvent, "payload"> & { payload: string }>;
    for (const row of rows) {
      let payload: Record<string, unknown>;
      try {
        payload = JSON.parse(row.payload) as Record<string, unknown>;
      } catch {
        state.problems.push({ seq: row.seq, event_type: row.event_type, message: "payload is not JSON" });
        continue;
      }
      applyEvent(state, { ...row, seq: Number(row.seq), payload });
    }
    if (rows.length < EVENT_PAGE) return state;
    after = Number(rows.at(-1)!.seq);
  }
}

function show(value: unknown): unknown {
  if (typeof value === "string" && value.length > SHOWN_CHARS) return `${value.slice(0, SHOWN_CHARS)}…`;
  return value ?? null;
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

function parseJson(text: unknown): unknown {
  if (typeof text !== "string") return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * Compares the rows with the state the event log implies: every task field, every live
 * relationship, every context entry and progress item. Returns one finding per difference.
 */
export async function historyFindings(db: SqlDb): Promise<Finding[]> {
  const state = await replayLog(db);
  const findings: Finding[] = state.problems.map((problem) => ({
    message: `event ${problem.seq} (${problem.event_type}) ${problem.message}`,
    seq: problem.seq,
  }));

  const taskRows = await db.all(`SELECT id, ${REPLAYED_TASK_FIELDS.join(", ")} FROM tasks`);
  const seenTasks = new Set<string>();
  for (const row of taskRows) {
    const id = row.id as string;
    seenTasks.add(id);
    const expected = state.tasks.get(id);
    if (!expected) {
      findings.push({ message: `task ${id} has no task_created event`, task_id: id });
      continue;
    }
    // metadata is JSON text in its column: compared as the object it holds.
    row.metadata = parseJson(row.metadata);
    for (const field of REPLAYED_TASK_FIELDS) {
      if (same(expected[field], row[field])) continue;
      findings.push({
        message: `task ${id}: ${field} is ${JSON.stringify(show(row[field]))}, its events say ${JSON.stringify(show(expected[field]))}`,
        task_id: id,
        field,
        expected: show(expected[field]),
        actual: show(row[field]),
      });
    }
  }
  for (const id of state.tasks.keys()) {
    if (!seenTasks.has(id))
      findings.push({ message: `task ${id} was created by an event but has no row`, task_id: id });
  }

  const liveEdges = (await db.all(
    "SELECT id, from_task_id, type, to_task_id FROM relationships WHERE removed_at IS NULL",
  )) as Array<{ id: string; from_task_id: string; type: string; to_task_id: string }>;
  const rowEdges = new Set<string>();
  for (const edge of liveEdges) {
    const key = edgeKey(edge.from_task_id, edge.type, edge.to_task_id);
    rowEdges.add(key);
    if (!state.edges.has(key)) {
      findings.push({
        message: `live relationship ${edge.id} (${key}) is not in the event history`,
        relationship_id: edge.id,
      });
    }
  }
  for (const key of state.edges) {
    if (!rowEdges.has(key))
      findings.push({ message: `the events leave ${key} live, but no live relationship row holds it`, edge: key });
  }

  compareRows(
    findings,
    "context entry",
    await db.all("SELECT id, task_id, type, content, metadata, superseded_by, created_at FROM context_entries"),
    state.context,
    (row) => ({ ...row, metadata: parseJson(row.metadata) }),
  );
  compareRows(
    findings,
    "progress item",
    await db.all("SELECT id, task_id, content, completed, created_at, completed_at FROM progress_items"),
    state.progress,
    (row) => ({ ...row, completed: Boolean(row.completed) }),
  );
  return findings;
}

function compareRows<T extends object>(
  findings: Finding[],
  what: string,
  rows: Array<Record<string, unknown>>,
  expected: Map<string, T>,
  normalize: (row: Record<string, unknown>) => Record<string, unknown>,
): void {
  const seen = new Set<string>();
  for (const raw of rows) {
    const row = normalize(raw);
    const id = row.id as string;
    seen.add(id);
    const replayed = expected.get(id) as Record<string, unknown> | undefined;
    if (!replayed) {
      findings.push({ message: `${what} ${id} has no event that added it`, id });
      continue;
    }
    for (const [field, value] of Object.entries(replayed)) {
      if (same(value, row[field])) continue;
      findings.push({
        message: `${what} ${id}: ${field} is ${JSON.stringify(show(row[field]))}, its events say ${JSON.stringify(show(value))}`,
        id,
        field,
      });
    }
  }
  for (const id of expected.keys()) {
    if (!seen.has(id)) findings.push({ message: `${what} ${id} was added by an event but has no row`, id });
  }
}
