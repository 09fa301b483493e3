import { z } from "zod";
import { ArbeitError } from "../domain/errors.js";
import { bottlenecksAnd, criticalPath, dependencyLayers, topBottlenecks } from "../domain/graph.js";
import { agentSession } from "../domain/identity.js";
import { projectRelative } from "../domain/paths.js";
import { READY_BECAUSE, readinessReasons } from "../domain/readiness.js";
import type { Reservation } from "../domain/reservations.js";
import { TEMPLATE_NAMES, TEMPLATES } from "../domain/templates.js";
import {
  EVENT_TYPES,
  type FileOperation,
  isTerminal,
  type RiskLevel,
  TASK_STATUSES,
  TASK_TYPES,
  type Task,
  type Warning,
} from "../domain/types.js";
import { identityName, limit, listId, metadataFilter, taskId, text, timestamp } from "../schemas/common.js";
import { lazyProperty } from "../schemas/lazy.js";
import { LIMITS } from "../schemas/limits.js";
import { fromZodError } from "../schemas/zod-errors.js";
import type { MetadataScalar, StoreTx, TaskKey } from "../store/task-store.js";
import type { Caller } from "./caller.js";
import { type KeptApart, pairsSharingFiles, plannedFiles, readyWithoutSharedFiles } from "./file-overlap.js";
import { requireTask } from "./invariants.js";
import { ok, type Result, type ServiceDeps } from "./operation.js";
import { type CursorKey, cursorScope, decodeCursor, encodeCursor } from "./page-cursor.js";
import { reservationsOverlapping, reservedPattern, viewOf } from "./reservations.js";
import { type SummaryOptions, summarizeAs, summarizeFiles, TASK_FIELDS, type TaskField } from "./summaries.js";

/**
 * Every named query of arbeit_query: its parameter schema and how it runs. Lists return compact
 * task summaries (see summarize) unless `full: true`, say whether more rows exist, and hand out
 * a `next_cursor` for the page after (see page-cursor.ts).
 */

const DEFAULT_LIMIT = 50;
const MAX_LAYERS_SHOWN = 25;
const DAY_MS = 86_400_000;

// Shared pieces of the params schemas, built when a query's params are (like the tools' inputs):
// a call that runs one tool builds no query's schemas.
const statusFilter = () => {
  const status = z.enum(TASK_STATUSES);
  return z.union([status, z.array(status).max(TASK_STATUSES.length)]);
};
const shown = () => ({
  full: z.boolean().describe("Whole tasks instead of summaries").optional(),
  fields: z
    .array(z.enum(TASK_FIELDS))
    .max(TASK_FIELDS.length)
    .describe("Task fields each summary adds as they are, e.g. version, updated_at")
    .optional(),
});
const cursor = () => text(1000).describe("The next_cursor of the previous page");
const page = () => ({ limit: limit.optional(), cursor: cursor().optional(), ...shown() });
const scoped = () => ({ list_id: listId.optional() });

interface QueryContext {
  /** The query's name: its cursors carry it. */
  name: string;
  /** What its rows are chosen by (cursorScope): its cursors are bound to it. */
  scope: string;
  tx: StoreTx;
  deps: ServiceDeps;
  caller: Caller;
}

interface QueryDef<S extends z.ZodType> {
  summary: string;
  /**
   * How to call it, in the fewest words, for the arbeit_query tool description: its key params
   * (`{task_id}`) or what it is for. Queries with the same brief are listed together.
   */
  brief?: string;
  params: S;
  /** Its rows depend on who asks (their claims and assignments): its cursors are the caller's. */
  perCaller?: true;
  run(ctx: QueryContext, params: z.infer<S>): Promise<Result<unknown>>;
}

/** A query as written: its params schema is built on first use, like the tools' (lazyProperty). */
function define<S extends z.ZodType>(def: Omit<QueryDef<S>, "params"> & { params: () => S }): QueryDef<S> {
  return lazyProperty(def, "params", def.params) as unknown as QueryDef<S>;
}

function statuses(filter: z.infer<ReturnType<typeof statusFilter>> | undefined) {
  if (filter === undefined) return undefined;
  return Array.isArray(filter) ? filter : [filter];
}

function scope(ctx: Pick<QueryContext, "caller">, params: { list_id?: string | undefined }): string | undefined {
  return params.list_id ?? ctx.caller.list_id;
}

type Shown = { full?: boolean | undefined; fields?: TaskField[] | undefined };
type Paging = { limit?: number | undefined; cursor?: string | undefined };

/** A task as a list shows it: whole with `full`, else its summary with any `fields` asked for. */
function shownAs(p: Shown, options: SummaryOptions = {}): (task: Task) => object {
  const summary = summarizeAs({ ...options, fields: p.fields });
  return (task) => (p.full ? task : summary(task));
}

const isTaskId = (value: unknown) => taskId.safeParse(value).success;
const isInstant = (value: unknown) => timestamp.safeParse(value).success;
const isCount = (value: unknown) => Number.isSafeInteger(value) && (value as number) >= 0;
const isPriority = (value: unknown) => isCount(value) && (value as number) <= 4;

/** How a query orders its rows: the key of a row, and what each part of a key must be. */
interface Order<R, K extends CursorKey> {
  shape: ReadonlyArray<(value: unknown) => boolean>;
  key(row: R): K;
}

const TASK_ORDER: Order<Task, TaskKey> = {
  shape: [isPriority, isInstant, isTaskId],
  key: (task) => [task.priority, task.created_at, task.id],
};

/**
 * One page in `order`: fetches one row more than asked to know whether it is the last, and hands
 * out the last row's key as next_cursor when it is not.
 */
async function keyset<R, K extends CursorKey>(
  ctx: QueryContext,
  p: Paging,
  order: Order<R, K>,
  fetch: (limit: number, after: K | undefined) => Promise<R[]>,
  defaultLimit = DEFAULT_LIMIT,
): Promise<{ rows: R[]; has_more: boolean; next_cursor?: string }> {
  const size = p.limit ?? defaultLimit;
  const after = p.cursor === undefined ? undefined : (decodeCursor(ctx.name, ctx.scope, p.cursor, order.shape) as K);
  const fetched = await fetch(size + 1, after);
  const rows = fetched.slice(0, size);
  if (fetched.length <= size) return { rows, has_more: false };
  return { rows, has_more: true, next_cursor: encodeCursor(ctx.name, ctx.scope, order.key(rows.at(-1)!)) };
}

/** A page of tasks in task order, shown as `p` asks. */
async function paged(
  ctx: QueryContext,
  p: Paging & Shown,
  fetch: (limit: number, after: TaskKey | undefined) => Promise<Task[]>,
  options: SummaryOptions = {},
): Promise<Result<{ tasks: object[]; has_more: boolean; next_cursor?: string }>> {
  const { rows, ...rest } = await keyset(ctx, p, TASK_ORDER, fetch);
  return ok({ tasks: rows.map(shownAs(p, options)), ...rest });
}

const since = () =>
  z.union([
    z.iso.datetime({ offset: true }),
    z
      .string()
      .regex(
        /^\d{1,6}[mhd]$/,
        "a duration like 30m, 24h or 7d (at most 6 digits), or an ISO-8601 time like 2026-11-25T09:00:00Z",
      ),
  ]);

function resolveSince(value: string, now: Date): string {
  const match = /^(\d+)([mhd])$/.exec(value);
  if (!match) return new Date(value).toISOString();
  const unit = match[2] === "m" ? 60_000 : match[2] === "h" ? 3_600_000 : DAY_MS;
  return new Date(now.getTime() - Number(match[1]) * unit).toISOString();
}

export const QUERIES = {
  tasks: define({
    brief: "{status?, parent_id? (null = roots), metadata? {key: value}}",
    summary:
      "List tasks; filter by status, parent_id (null = roots), type, owner, metadata ({key: value}: the value, or a list holding it, as labels; all must match).",
    params: () =>
      z.strictObject({
        status: statusFilter().optional(),
        parent_id: taskId.nullable().optional(),
        type: z.enum(TASK_TYPES).optional(),
        owner: identityName.optional(),
        metadata: metadataFilter().optional(),
        ...scoped(),
        ...page(),
      }),
    run: (ctx, p) =>
      paged(ctx, p, (limit, after) =>
        ctx.tx.listTasks({
          metadata: p.metadata,
          list_id: scope(ctx, p),
          statuses: statuses(p.status),
          parent_id: p.parent_id,
          type: p.type,
          owner: p.owner,
          limit,
          offset: 0,
          after,
        }),
      ),
  }),
  active_tasks: define({
    summary: "Open and in-progress tasks, optionally under parent_id.",
    params: () => z.strictObject({ parent_id: taskId.nullable().optional(), ...scoped(), ...page() }),
    run: (ctx, p) =>
      paged(ctx, p, (limit, after) =>
        ctx.tx.listTasks({
          list_id: scope(ctx, p),
          statuses: ["open", "in_progress"],
          parent_id: p.parent_id,
          limit,
          offset: 0,
          after,
        }),
      ),
  }),
  ready: define({
    brief: ": what to do now (explain: why not; metadata? as tasks)",
    summary:
      "Open, unblocked, unclaimed tasks, best first (priority, age, id); no status shown, all are open. Tasks that share files with work another session holds are left out (kept_apart: which, with what, the files). metadata filters as in tasks. explain: why (or, with task_id, why not).",
    perCaller: true,
    params: () =>
      z.strictObject({
        explain: z.boolean().optional(),
        task_id: taskId.optional(),
        metadata: metadataFilter().optional(),
        ...scoped(),
        ...page(),
      }),
    run: async (ctx, p) => {
      const now = ctx.tx.databaseNow();
      if (p.task_id) return ok(await explainTask(ctx, p.task_id, now));
      const apart: KeptApart[] = [];
      const page = await paged(
        ctx,
        p,
        (limit, after) => readyApart(ctx, { list_id: scope(ctx, p), now, metadata: p.metadata }, limit, after, apart),
        { withoutStatus: true },
      );
      const kept = apart.length > 0 ? { kept_apart: apart } : {};
      if (!p.explain) return ok({ ...page.data, ...kept });
      return ok({
        ...page.data,
        ...kept,
        ready_because: READY_BECAUSE,
        not_ready: await notReady(ctx, scope(ctx, p), now),
      });
    },
  }),
  next: define({
    brief: ": what to do now (explain: why not; metadata? as tasks)",
    summary: "The single best ready task, in full (what to do next); metadata filters as in tasks.",
    params: () => z.strictObject({ metadata: metadataFilter().optional(), ...scoped() }),
    run: async (ctx, p) => {
      const filter = { list_id: scope(ctx, p), now: ctx.tx.databaseNow(), metadata: p.metadata };
      const [task] = await readyApart(ctx, filter, 1, undefined, []);
      return ok(
        task
          ? { task, why: READY_BECAUSE }
          : {
              task: null,
              why: p.metadata
                ? "No task with that metadata is ready: each is blocked, claimed or finished, or none has it."
                : "No task is ready: every open task is blocked, claimed or finished.",
            },
      );
    },
  }),
  critical_path: define({
    brief: "{parent_id?}",
    summary:
      "The longest chain of unfinished work along blocks edges, optionally under parent_id. Its cursor is a position in the chain as found at each call.",
    params: () => z.strictObject({ parent_id: taskId.optional(), ...scoped(), ...page() }),
    run: async (ctx, p) => {
      const filter = graphScope(ctx, p);
      const path = criticalPath(await ctx.tx.blockEdges(filter));
      // The chain can be thousands long: show its first steps (what to do first) and its length.
      const { rows, ...rest } = await keyset(ctx, p, POSITION, async (size, after) => {
        const from = after?.[0] ?? 0;
        return path.slice(from, from + size).map((_, i) => ({ position: from + i + 1 }));
      });
      // With no dependencies at all, the longest chain is any one task: offer the best.
      const tasks =
        path.length > 0
          ? await tasksInOrder(
              ctx.tx,
              rows.map((row) => path[row.position - 1]!),
            )
          : (await ctx.tx.unblockedUnfinished({ ...filter, limit: 1 })).tasks;
      return ok({ length: Math.max(path.length, tasks.length), tasks: tasks.map(shownAs(p)), ...rest });
    },
  }),
  parallel_groups: define({
    brief: "{parent_id?}",
    summary:
      "Unfinished tasks in dependency layers; each layer can run side by side (layer 0 shows the best to start now), except pairs that share files (kept_apart names them and the files). limit caps tasks shown per layer.",
    params: () => z.strictObject({ parent_id: taskId.optional(), ...scoped(), limit: limit.optional(), ...shown() }),
    run: async (ctx, p) => {
      const show = shownAs(p);
      const shown = p.limit ?? 20;
      const filter = graphScope(ctx, p);
      // The edges, the count and the best tasks to start are asked together. A long chain makes a
      // layer per task: the first layers are shown, and how many there are is said.
      const layering = ctx.tx.blockEdges(filter).then((edges) => dependencyLayers(edges, MAX_LAYERS_SHOWN - 1));
      layering.catch(() => {});
      const blocked = layering.then((layered) => layered.blocked);
      blocked.catch(() => {});
      const firstRead = ctx.tx.unblockedUnfinished({ ...filter, limit: shown, blocked });
      firstRead.catch(() => {});
      const { deepest, layers } = await layering;
      const first = await firstRead;
      const shownLayers = layers.slice(1).map((ids, i) => ({ layer: i + 1, count: ids.length, ids }));
      const sample = new Map(shownLayers.map(({ layer, ids }) => [layer, ids.sort().slice(0, shown)]));
      const tasks = new Map((await ctx.tx.getTasks([...sample.values()].flat())).map((task) => [task.id, task]));
      const groups = [{ layer: 0, count: first.total, tasks: first.tasks.map(show) }];
      for (const { layer, count } of shownLayers) {
        const members = sample.get(layer)!.flatMap((id) => tasks.get(id) ?? []);
        members.sort(
          (a, b) => a.priority - b.priority || a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id),
        );
        groups.push({ layer, count, tasks: members.map(show) });
      }
      // Tasks of one layer that share files cannot both be edited at once: say which and why.
      const shownTasks = [...first.tasks, ...tasks.values()];
      const files = await plannedFiles(ctx.tx, shownTasks, ctx.tx.databaseNow());
      const withApart = groups.map((group) => {
        const ids = group.tasks.map((task) => (task as { id: string }).id);
        const pairs = pairsSharingFiles(ids, files);
        return pairs.length > 0 ? { ...group, kept_apart: pairs } : group;
      });
      return ok({ layers_total: deepest + 1, groups: withApart });
    },
  }),
  bottlenecks: define({
    brief: "{parent_id?}",
    summary: "Unfinished tasks ranked by how much unfinished work they block, directly or transitively.",
    params: () => z.strictObject({ parent_id: taskId.optional(), ...scoped(), limit: limit.optional(), ...shown() }),
    run: async (ctx, p) => {
      const show = shownAs(p);
      const ranked = topBottlenecks(await ctx.tx.blockEdges(graphScope(ctx, p)), p.limit ?? 10);
      const tasks = new Map((await ctx.tx.getTasks(ranked.map((r) => r.id))).map((task) => [task.id, task]));
      return ok({
        tasks: ranked.flatMap((r) => {
          const task = tasks.get(r.id);
          return task ? [{ ...show(task), blocks_total: r.blocks, blocks_directly: r.direct }] : [];
        }),
      });
    },
  }),
  risks: define({
    brief: "{parent_id?}",
    summary:
      "Unfinished tasks with a risk or impact set, or that others wait on, ranked by score = (1 + risk + impact) × (1 + dependants) − 1 (high 3, medium 2, low 1, unset 0; dependants: unfinished tasks it blocks, directly or transitively).",
    params: () => z.strictObject({ parent_id: taskId.optional(), ...scoped(), limit: limit.optional(), ...shown() }),
    run: async (ctx, p) => {
      const show = shownAs(p);
      const size = p.limit ?? 20;
      const filter = graphScope(ctx, p);
      const edges = await ctx.tx.blockEdges(filter);
      const assessed = new Map((await ctx.tx.assessedUnfinished(filter)).map((task) => [task.id, task]));
      // The bottlenecks' top `size` is enough for the tasks nobody assessed: their score is what
      // they block, so one left out of that top cannot outrank the `size` tasks in it.
      const counts = bottlenecksAnd(edges, size, assessed.keys());
      const onPath = new Set(criticalPath(edges));
      const rows = counts
        .map((b) => ({ ...b, score: riskScore(assessed.get(b.id), b.blocks) }))
        .sort((a, b) => b.score - a.score || b.blocks - a.blocks || b.direct - a.direct || a.id.localeCompare(b.id))
        .slice(0, size);
      const unassessed = rows.filter((row) => !assessed.has(row.id)).map((row) => row.id);
      const tasks = new Map([...assessed, ...(await ctx.tx.getTasks(unassessed)).map((t) => [t.id, t] as const)]);
      return ok({
        tasks: rows.flatMap((row) => {
          const task = tasks.get(row.id);
          if (!task) return [];
          const marked = onPath.has(row.id) ? { on_critical_path: true } : {};
          return [{ ...show(task), score: row.score, dependants: row.blocks, ...marked }];
        }),
      });
    },
  }),
  blocked_tasks: define({
    summary: "Tasks waiting on an unfinished blocker.",
    params: () => z.strictObject({ status: statusFilter().optional(), ...scoped(), ...page() }),
    run: (ctx, p) =>
      paged(ctx, p, (limit, after) =>
        ctx.tx.blockedTasks({ list_id: scope(ctx, p), statuses: statuses(p.status), limit, offset: 0, after }),
      ),
  }),
  blocking_tasks: define({
    summary: "Unfinished tasks that hold up other unfinished tasks.",
    params: () => z.strictObject({ status: statusFilter().optional(), ...scoped(), ...page() }),
    run: (ctx, p) =>
      paged(ctx, p, (limit, after) =>
        ctx.tx.blockingTasks({ list_id: scope(ctx, p), statuses: statuses(p.status), limit, offset: 0, after }),
      ),
  }),
  children_of: define({
    brief: "{task_id}",
    summary: "Direct children of task_id.",
    params: () => z.strictObject({ task_id: taskId, ...page() }),
    run: async (ctx, p) => {
      await requireTask(ctx.tx, p.task_id);
      const { rows, ...rest } = await keyset(
        ctx,
        p,
        TASK_ORDER,
        (size, after) => ctx.tx.childrenPage(p.task_id, size, after),
        LIMITS.query_limit,
      );
      return ok({ tasks: rows.map(shownAs(p)), ...rest });
    },
  }),
  descendants_of: define({
    brief: "{task_id}",
    summary: "All descendants of task_id, with depth.",
    params: () => z.strictObject({ task_id: taskId, ...page() }),
    run: async (ctx, p) => {
      await requireTask(ctx.tx, p.task_id);
      const show = shownAs(p);
      const { rows, ...rest } = await keyset(
        ctx,
        p,
        DEPTH_ORDER,
        (size, after) => ctx.tx.descendants(p.task_id, size, after),
        LIMITS.query_limit,
      );
      return ok({ tasks: rows.map(({ depth, ...task }) => ({ ...show(task), depth })), ...rest });
    },
  }),
  ancestors_of: define({
    brief: "{task_id}",
    summary: "Ancestors of task_id, nearest first.",
    params: () => z.strictObject({ task_id: taskId, ...shown() }),
    run: async (ctx, p) => {
      await requireTask(ctx.tx, p.task_id);
      const tasks = await ctx.tx.ancestors(p.task_id);
      return ok({ tasks: tasks.map(shownAs(p)) });
    },
  }),
  recent_activity: define({
    brief: "{since}",
    summary: "Context entries and progress since a time (ISO or 24h/7d), optionally for task_id.",
    params: () => z.strictObject({ since: since(), task_id: taskId.optional(), ...scoped(), limit: limit.optional() }),
    run: async (ctx, p) => {
      if (p.task_id) await requireTask(ctx.tx, p.task_id);
      const filter = {
        since: resolveSince(p.since, ctx.deps.nowDate()),
        task_id: p.task_id,
        list_id: scope(ctx, p),
        limit: p.limit ?? DEFAULT_LIMIT,
      };
      return ok({
        since: filter.since,
        context: await ctx.tx.recentContext(filter),
        progress: await ctx.tx.recentProgress(filter),
      });
    },
  }),
  stale_tasks: define({
    brief: "{days}",
    summary: "Open or in-progress tasks with no activity for `days` days.",
    params: () => z.strictObject({ days: z.number().min(0).max(36_500), ...scoped(), ...page() }),
    run: async (ctx, p) => {
      const before = new Date(ctx.deps.nowDate().getTime() - p.days * DAY_MS).toISOString();
      const { rows, ...rest } = await keyset(ctx, p, QUIET_ORDER, (limit, after) =>
        ctx.tx.staleTasks({ list_id: scope(ctx, p), updated_before: before, limit, offset: 0, after }),
      );
      return ok({ tasks: rows.map(shownAs(p)), ...rest });
    },
  }),
  files_for_task: define({
    brief: "{task_id}",
    summary: "Files read or written while working on task_id.",
    params: () => z.strictObject({ task_id: taskId }),
    run: async (ctx, p) => {
      await requireTask(ctx.tx, p.task_id);
      return ok({ files: summarizeFiles(await ctx.tx.filesOf(p.task_id)) });
    },
  }),
  tasks_for_file: define({
    brief: "{file_path}",
    summary: "Tasks that touched file_path (relative to the project root).",
    params: () => z.strictObject({ file_path: text(LIMITS.file_path).min(1), ...page() }),
    run: async (ctx, p) => {
      const path = projectRelative(ctx.deps.projectRoot, p.file_path) ?? p.file_path;
      const show = shownAs(p);
      const { rows, ...rest } = await keyset(ctx, p, TOUCH_ORDER, (size, after) =>
        ctx.tx.tasksForFile(path, size, after),
      );
      return ok({
        file_path: path,
        tasks: rows.map((row) => ({ ...show(row.task), operations: row.operations, last_at: row.last_at })),
        ...rest,
      });
    },
  }),
  reservations: define({
    brief: "{path?}",
    summary:
      "Live file reservations: who holds which path or glob (exclusive or shared), for which task, until when; path: only those that could match it.",
    params: () =>
      z.strictObject({
        path: text(LIMITS.file_path).min(1).optional(),
        limit: limit.optional(),
        cursor: cursor().optional(),
      }),
    run: async (ctx, p) => {
      const now = ctx.tx.databaseNow();
      if (p.path !== undefined) {
        const pattern = reservedPattern(ctx.deps, p.path);
        const found = pattern === null ? [] : await reservationsOverlapping(ctx.tx, pattern, now);
        return ok({ path: pattern, reservations: found.slice(0, p.limit ?? DEFAULT_LIMIT).map(viewOf) });
      }
      const { rows, ...rest } = await keyset(ctx, p, PATTERN_ORDER, (size, after) =>
        ctx.tx.liveReservations(now, size, after),
      );
      return ok({ reservations: rows.map((row) => viewOf(row)), ...rest });
    },
  }),
  templates: define({
    summary: "Task templates with their plan stubs.",
    params: () => z.strictObject({}),
    run: async () => ok({ templates: TEMPLATE_NAMES.map((n) => TEMPLATES[n]) }),
  }),
  events: define({
    brief: "{after_seq?}",
    summary: "The event log after a sequence number (after_seq, or the cursor of a page), optionally for task_id.",
    params: () =>
      z.strictObject({
        after_seq: z.number().int().min(0).optional(),
        task_id: taskId.optional(),
        event_types: z.array(z.enum(EVENT_TYPES)).max(EVENT_TYPES.length).optional(),
        limit: limit.optional(),
        cursor: cursor().optional(),
      }),
    run: async (ctx, p) => {
      const { rows, ...rest } = await keyset(
        ctx,
        p,
        SEQ_ORDER,
        (limit, after) =>
          ctx.tx.listEvents({
            after_seq: after?.[0] ?? p.after_seq ?? 0,
            task_id: p.task_id,
            event_types: p.event_types,
            limit,
          }),
        100,
      );
      const last = rows.at(-1);
      return ok({ events: rows, next_after_seq: last ? last.seq : (p.after_seq ?? 0), ...rest });
    },
  }),
} as const;

const DEPTH_ORDER: Order<Task & { depth: number }, readonly [number, ...TaskKey]> = {
  shape: [isCount, ...TASK_ORDER.shape],
  key: (task) => [task.depth, ...TASK_ORDER.key(task)],
};
const QUIET_ORDER: Order<Task, readonly [string, string]> = {
  shape: [isInstant, isTaskId],
  key: (task) => [task.updated_at, task.id],
};
const TOUCH_ORDER: Order<{ task: Task; operations: FileOperation[]; last_at: string }, readonly [string, string]> = {
  shape: [isInstant, isTaskId],
  key: (row) => [row.last_at, row.task.id],
};
const PATTERN_ORDER: Order<Reservation, readonly [string, string]> = {
  shape: [(value) => typeof value === "string", (value) => typeof value === "string"],
  key: (row) => [row.pattern, row.id],
};
const SEQ_ORDER: Order<{ seq: number }, readonly [number]> = { shape: [isCount], key: (event) => [event.seq] };
const POSITION: Order<{ position: number }, readonly [number]> = {
  shape: [isCount],
  key: (row) => [row.position],
};

function graphScope(ctx: QueryContext, p: { parent_id?: string | undefined; list_id?: string | undefined }) {
  const list = scope(ctx, p);
  return {
    ...(list === undefined ? {} : { list_id: list }),
    ...(p.parent_id === undefined ? {} : { under: p.parent_id }),
  };
}

const RISK_WEIGHT: Record<RiskLevel, number> = { low: 1, medium: 2, high: 3 };

/**
 * What a task puts at stake: its own risk and impact, multiplied by the work that waits on it,
 * since a task that goes wrong takes what it blocks with it. Zero for an unassessed task that
 * blocks nothing, which the ranking leaves out.
 */
export function riskScore(task: Pick<Task, "risk" | "impact"> | undefined, dependants: number): number {
  const own = (task?.risk ? RISK_WEIGHT[task.risk] : 0) + (task?.impact ? RISK_WEIGHT[task.impact] : 0);
  return (1 + own) * (1 + dependants) - 1;
}

async function tasksInOrder(tx: StoreTx, ids: readonly string[]): Promise<Task[]> {
  const byId = new Map((await tx.getTasks(ids)).map((task) => [task.id, task]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

/** A page of ready tasks for the caller, without those that share files with another session's work. */
function readyApart(
  ctx: QueryContext,
  filter: { list_id: string | undefined; now: string; metadata: Record<string, MetadataScalar> | undefined },
  limit: number,
  after: TaskKey | undefined,
  apart: KeptApart[],
): Promise<Task[]> {
  const who = readyFor(ctx);
  return readyWithoutSharedFiles(
    ctx.tx,
    { ...who, ...filter },
    [who.session, ...(ctx.caller.parents ?? [])],
    limit,
    after,
    apart,
  );
}

/** Whose ready work: the caller's agent (its assignments) and session (its own claims). */
function readyFor(ctx: Pick<QueryContext, "caller">): { agent: string | null; session: string } {
  return { agent: ctx.caller.agent, session: ctx.caller.session ?? agentSession(ctx.caller.agent) };
}

/** The ids of a task's children still open or in progress. */
async function unfinishedChildren(ctx: QueryContext, id: string): Promise<string[]> {
  return (await ctx.tx.children(id)).filter((child) => !isTerminal(child.status)).map((child) => child.id);
}

async function explainTask(ctx: QueryContext, id: string, now: string) {
  const task = await requireTask(ctx.tx, id);
  const unfinished = (await ctx.tx.blockers(task.id)).filter((b) => !isTerminal(b.status)).map((b) => b.id);
  const reasons = readinessReasons(task, now, unfinished, readyFor(ctx), await unfinishedChildren(ctx, task.id));
  return { task_id: task.id, ready: reasons.length === 0, reasons: reasons.length === 0 ? [READY_BECAUSE] : reasons };
}

/** Open tasks that are not ready, with why: the answer to "why is nothing ready?". */
async function notReady(ctx: QueryContext, list: string | undefined, now: string) {
  const open = await ctx.tx.listTasks({ list_id: list, statuses: ["open"], limit: 200, offset: 0 });
  const out: Array<{ id: string; title: string; reasons: string[] }> = [];
  for (const task of open) {
    if (out.length >= 10) break;
    const unfinished = task.blocked
      ? (await ctx.tx.blockers(task.id)).filter((b) => !isTerminal(b.status)).map((b) => b.id)
      : [];
    const reasons = readinessReasons(task, now, unfinished, readyFor(ctx), await unfinishedChildren(ctx, task.id));
    if (reasons.length > 0) out.push({ id: task.id, title: task.title, reasons });
  }
  return out;
}

export type QueryName = keyof typeof QUERIES;
export const QUERY_NAMES = Object.keys(QUERIES) as [QueryName, ...QueryName[]];

/**
 * Every query by name, grouped by how it is called: the arbeit_query tool's description, made
 * from this list so that a new query is described where it is defined.
 */
export function queryGuide(): string {
  const groups = new Map<string, string[]>();
  for (const [name, def] of Object.entries(QUERIES) as Array<[string, { brief?: string }]>) {
    const brief = def.brief ?? "";
    groups.set(brief, [...(groups.get(brief) ?? []), name]);
  }
  // Queries that take no params of their own are named by the tool's enum alone.
  groups.delete("");
  return [...groups]
    .map(([brief, names]) => `${names.join("/")}${brief.startsWith(":") ? brief : ` ${brief}`}.`)
    .join(" ");
}

export async function runQuery(
  deps: ServiceDeps,
  input: { query: QueryName; params?: Record<string, unknown> },
  caller: Caller,
): Promise<Result<unknown>> {
  const def = QUERIES[input.query] as QueryDef<z.ZodType> | undefined;
  if (def === undefined) {
    throw new ArbeitError("UNKNOWN_QUERY", `There is no query named ${JSON.stringify(input.query)}.`, {
      suggestions: [`Use one of: ${QUERY_NAMES.join(", ")}.`],
    });
  }
  const parsed = def.params.safeParse(input.params ?? {});
  if (!parsed.success) throw fromZodError(parsed.error, "params");
  const params = parsed.data as Record<string, unknown>;
  // A query that takes list_id reads the caller's list when it is not given: that list is its scope.
  const listScoped = "list_id" in (def.params as unknown as z.ZodObject).shape;
  const bound = cursorScope(
    def.perCaller ? { ...params, ...readyFor({ caller }) } : params,
    listScoped ? scope({ caller }, params) : null,
  );
  const result = await deps.store.read((tx) =>
    def.run({ name: input.query, scope: bound, tx, deps, caller }, parsed.data),
  );
  const warnings: Warning[] = result.warnings;
  return { data: { query: input.query, ...(result.data as object) }, warnings };
}
