import assert from "node:assert/strict";
import { it } from "node:test";
import { ArbeitService } from "../../../src/service/arbeit-service.js";
import { InMemoryTaskStore } from "../../../src/store/sqlite/sqlite-task-store.js";
import type { Envelope } from "../../../src/tools/envelope.js";
import { TestClock } from "../../helpers/service.js";
import { alice, bob, type ContractProject, contractProject, type StoreFactory, suite, useStore } from "./harness.js";

type Step = [tool: string, args: (ids: Record<string, string>) => Record<string, unknown>, caller?: typeof alice];

const t = (title: string) => (ids: Record<string, string>) => ids[title]!;

/**
 * A scripted session touching every tool, errors included. The clock moves a second per call so
 * that no two rows tie on time; tasks are named by title in later steps.
 */
const SCRIPT: Step[] = [
  ["arbeit_task_create", () => ({ title: "epic", type: "epic", intent: "ship v2" })],
  ["arbeit_task_create", (i) => ({ title: "design", parent_id: t("epic")(i), priority: 1, description: "d" })],
  ["arbeit_task_create", (i) => ({ title: "api", parent_id: t("epic")(i), blocked_by: [t("design")(i)] })],
  ["arbeit_task_create", (i) => ({ title: "ui", parent_id: t("epic")(i), blocked_by: [t("api")(i)], priority: 0 })],
  ["arbeit_task_create", (i) => ({ title: "release", blocked_by: [t("ui")(i)], priority: 1 })],
  ["arbeit_task_create", () => ({ title: "docs", template: "chore", priority: 3 })],
  ["arbeit_task_create", () => ({ title: "lint", priority: 0, list_id: "ops" })],
  ["arbeit_task_update", (i) => ({ task_id: t("docs")(i), blocked_by: [t("design")(i)] })],
  ["arbeit_task_update", (i) => ({ task_id: t("docs")(i), blocked_by: [t("design")(i), t("api")(i)] })],
  [
    "arbeit_relationship",
    (i) => ({ action: "add", from_task_id: t("ui")(i), to_task_id: t("design")(i), type: "blocks" }),
  ],
  [
    "arbeit_relationship",
    (i) => ({ action: "add", from_task_id: t("lint")(i), to_task_id: t("docs")(i), type: "splits_from" }),
  ],
  ["arbeit_query", () => ({ query: "ready" })],
  ["arbeit_query", () => ({ query: "ready", params: { explain: true } })],
  ["arbeit_task_claim", () => ({ next: true, lease_seconds: 120 })],
  ["arbeit_task_claim", () => ({ next: true }), bob],
  ["arbeit_task_claim", (i) => ({ task_id: t("design")(i) }), bob],
  ["arbeit_task_start_work", (i) => ({ task_id: t("design")(i) })],
  [
    "arbeit_context_add",
    (i) => ({ task_id: t("design")(i), type: "decision", content: "REST", metadata: { by: "a" } }),
  ],
  ["arbeit_context_add", (i) => ({ task_id: t("design")(i), type: "attempt", content: "tried gRPC" })],
  ["arbeit_progress_add", (i) => ({ task_id: t("design")(i), items: ["sketch", "review", "sign off"] })],
  ["arbeit_memory", () => ({ action: "set", key: "db", value: { engine: "pg" } })],
  ["arbeit_memory", () => ({ action: "set", key: "tmp", value: 1, ttl_seconds: 3 })],
  ["arbeit_memory", () => ({ action: "set", key: "style", value: "terse", scope: "agent" })],
  ["arbeit_resume", () => ({ max_tokens: 4000 })],
  ["arbeit_resume", () => ({ peek: true }), bob],
  ["arbeit_task_update", (i) => ({ task_id: t("design")(i), status: "completed", plan: "p", expected_version: 1 })],
  ["arbeit_task_update", (i) => ({ task_id: t("design")(i), status: "completed", plan: "p" })],
  ["arbeit_task_stop_work", (i) => ({ task_id: t("design")(i) })],
  ["arbeit_query", () => ({ query: "ready" })],
  ["arbeit_query", () => ({ query: "critical_path" })],
  ["arbeit_query", () => ({ query: "parallel_groups" })],
  ["arbeit_query", () => ({ query: "bottlenecks" })],
  ["arbeit_query", () => ({ query: "blocked_tasks" })],
  ["arbeit_query", () => ({ query: "blocking_tasks" })],
  ["arbeit_query", (i) => ({ query: "descendants_of", params: { task_id: t("epic")(i) } })],
  ["arbeit_query", (i) => ({ query: "ancestors_of", params: { task_id: t("ui")(i) } })],
  ["arbeit_memory", () => ({ action: "list" })],
  ["arbeit_task_claim", () => ({ next: true, list_id: "ops" }), bob],
  ["arbeit_task_create", (i) => ({ title: "cycle", blocked_by: [t("ui")(i)], parent_id: t("ui")(i) })],
  ["arbeit_task_update", (i) => ({ task_id: t("design")(i), blocked_by: [t("ui")(i)] })],
  ["arbeit_task_update", (i) => ({ task_id: t("docs")(i), title: "docs!", request_id: "r1" })],
  ["arbeit_task_update", (i) => ({ task_id: t("docs")(i), title: "docs!", request_id: "r1" })],
  ["arbeit_task_delete", (i) => ({ task_id: t("lint")(i) })],
  [
    "arbeit_task_get",
    (i) => ({
      task_id: t("docs")(i),
      include: [
        "relationships",
        "context_all",
        "progress_summary",
        "parent",
        "blocked_by",
        "blocking",
        "recent_events",
      ],
    }),
  ],
  [
    "arbeit_task_get",
    (i) => ({
      task_id: t("design")(i),
      include: ["context", "progress", "children", "blocking", "files", "sessions", "recent_events"],
    }),
  ],
  ["arbeit_query", () => ({ query: "recent_activity", params: { since: "1h" } })],
  ["arbeit_query", () => ({ query: "stale_tasks", params: { days: 0 } })],
  ["arbeit_query", () => ({ query: "tasks", params: { status: "open", fields: ["version", "updated_at"] } })],
  ["arbeit_resume", () => ({}), alice],
  ["arbeit_resume", () => ({}), bob],
  ["arbeit_query", () => ({ query: "events", params: { after_seq: 10, limit: 15 } })],
];

/** Runs the script; returns every envelope with ids and seq numbers replaced by stable names. */
export async function transcript(p: ContractProject): Promise<unknown> {
  const byTitle: Record<string, string> = {};
  const out: Envelope[] = [];
  for (const [tool, args, caller] of SCRIPT) {
    const envelope = await p.call(tool, args(byTitle), caller ?? alice);
    if (tool === "arbeit_task_create" && envelope.success) {
      const task = (envelope.data as { task: { id: string; title: string } }).task;
      byTitle[task.title] = task.id;
    }
    out.push(envelope);
    p.clock.advance(1000);
  }
  // Event seqs may differ between stores (Postgres sequences skip numbers on rollback): compare ranks.
  const seqs = await p.read(async (tx) => (await tx.listEvents({ after_seq: 0, limit: 10_000 })).map((e) => e.seq));
  return normalise(out, byTitle, seqs);
}

const SEQ_KEYS = new Set(["seq", "after_seq", "next_after_seq", "previous", "current", "cursor_seq"]);
const ID = /\b(tkt|ctx|prg|rel|evt|fle|ses|mem)-[a-z0-9]{8}\b/g;
/** An id cut short by truncateText ("prg-x7…"). */
const CUT_ID = /\b(tkt|ctx|prg|rel|evt|fle|ses|mem)-[a-z0-9]{0,7}…/g;

function normalise(value: unknown, byTitle: Record<string, string>, seqs: number[]): unknown {
  const names = new Map<string, string>(Object.entries(byTitle).map(([title, id]) => [id, `<${title}>`]));
  const counters = new Map<string, number>();
  const name = (id: string) => {
    let known = names.get(id);
    if (known === undefined) {
      const kind = id.slice(0, 3);
      const n = (counters.get(kind) ?? 0) + 1;
      counters.set(kind, n);
      known = `<${kind}${n}>`;
      names.set(id, known);
    }
    return known;
  };
  const rank = (seq: number) => {
    const below = seqs.filter((s) => s <= seq);
    return below.length === 0 ? 0 : below.length;
  };
  const walk = (node: unknown, key?: string): unknown => {
    if (typeof node === "string") return node.replace(ID, name).replace(CUT_ID, "<$1 cut>…");
    if (typeof node === "number" && key !== undefined && SEQ_KEYS.has(key)) return rank(node);
    if (Array.isArray(node)) {
      const items = node.map((item) => walk(item));
      // blocked_by and blocks are ordered by raw id, which is random: compare them as sets.
      return (key === "blocked_by" || key === "blocks") && items.every((item) => typeof item === "string")
        ? items.sort()
        : items;
    }
    if (node !== null && typeof node === "object")
      return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, walk(v, k)]));
    return node;
  };
  return walk(value);
}

/** The store answers a long scripted session exactly as the SQLite reference store does. */
export function referenceContract(factory: StoreFactory): void {
  suite("same answers as the reference", () => {
    const p = useStore(factory);

    it("replays a scripted session with the same envelopes as an in-memory SQLite store", async () => {
      const clock = new TestClock();
      const reference = await InMemoryTaskStore.open({ clock: clock.now });
      const base = { ...p(), store: reference, clock };
      try {
        const expected = await transcript(
          contractProject(base, new ArbeitService(reference, { projectRoot: p().root, now: clock.now })),
        );
        const actual = await transcript(p());
        assert.deepEqual(actual, expected);
      } finally {
        await reference.close();
      }
    });
  });
}
