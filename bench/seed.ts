import type { ContextType, TaskType } from "../src/domain/types.js";
import { ArbeitService } from "../src/service/arbeit-service.js";
import type { Caller } from "../src/service/caller.js";
import { BulkStore, countRows } from "./bulk-store.js";
import { Rng } from "./stats.js";

/**
 * Builds the benchmark dataset through the real service (every row and event is written by the
 * same code an agent's call runs), batched into large transactions by BulkStore.
 *
 * Shape: projects of 66 tasks (an epic, 5 features, 6 tasks per feature, 3 subtasks under 2 of
 * them: 4 levels), blocks chains inside each feature and between features, then one long blocks
 * chain for the cycle checks and one unrelated task. Old projects are finished, recent ones are
 * in progress or untouched, so the store looks like months of agent work: context, progress,
 * files, sessions and about ten events per task.
 */

export interface SeedParams {
  tasks: number;
  chain: number;
  seed: number;
}

/** Ids the measurements pick their targets from. */
export interface Manifest {
  params: SeedParams;
  projects: number;
  epics: string[];
  features: string[];
  /** Open leaf tasks (update targets). */
  openLeaves: string[];
  /** Finished or in-progress leaves with context, progress, files, sessions and blockers. */
  richLeaves: string[];
  chain: string[];
  outsider: string;
  seedSeconds: number;
  serviceCalls: number;
  counts: Record<string, number>;
}

const FEATURES = 5;
const TASKS_PER_FEATURE = 6;
const PARENTS_PER_FEATURE = 2;
const SUBTASKS = 3;
export const PROJECT_SIZE = 1 + FEATURES * (1 + TASKS_PER_FEATURE + PARENTS_PER_FEATURE * SUBTASKS);

const COMMIT_EVERY = 5_000;
/** Simulated time between two service calls while seeding. */
const CLOCK_STEP_MS = 2_000;
const AGENTS = ["claude-1", "claude-2", "opencode-1", "opencode-2", "codex-1", "planner", "reviewer", "human"];
const WORDS = (
  "parser cache index query schema token session retry lease claim graph cycle budget event cursor " +
  "migration driver handler router config plugin hook briefing context progress file lock backoff " +
  "timeout release deploy metric trace logger queue worker batch import export snapshot replay " +
  "validate normalize render compact merge split refactor fix add remove rename document test"
).split(" ");

type LeafWork = "complete" | "cancel" | "progress" | "notes" | "none";
type ProjectState = "done" | "active" | "fresh";

export class Seeder {
  readonly #service: ArbeitService;
  readonly #store: BulkStore;
  readonly #rng: Rng;
  readonly #clock: { ms: number };
  #calls = 0;
  #sessions = 0;
  readonly manifest: Omit<Manifest, "seedSeconds" | "counts">;

  private constructor(store: BulkStore, params: SeedParams) {
    this.#store = store;
    this.#rng = new Rng(params.seed);
    const calls = params.tasks * 9;
    this.#clock = { ms: Date.now() - calls * CLOCK_STEP_MS - 86_400_000 };
    this.#service = new ArbeitService(store, { projectRoot: "/bench/project", now: () => new Date(this.#clock.ms) });
    this.manifest = {
      params,
      projects: 0,
      epics: [],
      features: [],
      openLeaves: [],
      richLeaves: [],
      chain: [],
      outsider: "",
      serviceCalls: 0,
    };
  }

  static async run(path: string, params: SeedParams, log: (line: string) => void): Promise<Manifest> {
    const started = Date.now();
    const store = await BulkStore.open(path);
    const seeder = new Seeder(store, params);
    try {
      await seeder.#build(log);
    } finally {
      await store.close();
    }
    const counts = await countRows(path);
    return {
      ...seeder.manifest,
      serviceCalls: seeder.#calls,
      seedSeconds: (Date.now() - started) / 1000,
      counts,
    };
  }

  async #build(log: (line: string) => void): Promise<void> {
    const { tasks, chain } = this.manifest.params;
    const projects = Math.floor((tasks - chain - 1) / PROJECT_SIZE);
    const standalone = tasks - chain - 1 - projects * PROJECT_SIZE;
    this.manifest.projects = projects;
    let lastLog = Date.now();
    for (let p = 0; p < projects; p++) {
      // Older projects are finished, recent ones under way or not started.
      const age = p / projects;
      const state: ProjectState = age < 0.62 ? "done" : age < 0.84 ? "active" : "fresh";
      await this.#project(p, state);
      if (Date.now() - lastLog > 10_000) {
        lastLog = Date.now();
        log(`  ${p + 1}/${projects} projects, ${this.#calls} service calls`);
      }
    }
    for (let i = 0; i < standalone; i++) {
      const id = await this.#create({ title: this.#title("Loose end") });
      await this.#leaf(id, "notes", this.#agent(), 0);
    }
    const caller = this.#caller("planner");
    let previous: string | undefined;
    for (let i = 0; i < chain; i++) {
      const id: string = await this.#create(
        {
          title: `Pipeline stage ${i + 1} of ${chain}`,
          description: this.#text(12),
          ...(previous ? { blocked_by: [previous] } : {}),
        },
        caller,
      );
      this.manifest.chain.push(id);
      previous = id;
    }
    this.manifest.outsider = await this.#create({ title: "Release checklist", description: this.#text(10) }, caller);
  }

  // ---- one project --------------------------------------------------------------------------

  async #project(p: number, state: ProjectState): Promise<void> {
    const agent = this.#agent();
    const caller = this.#caller(agent);
    const epic = await this.#create(
      {
        title: this.#title(`Epic ${p + 1}:`),
        type: "epic",
        intent: this.#text(14),
        description: this.#text(40),
        priority: this.#priority(),
      },
      caller,
    );
    this.manifest.epics.push(epic);
    const features: string[] = [];
    for (let f = 0; f < FEATURES; f++) {
      const blocker = f > 0 && this.#rng.chance(0.5) ? [features[f - 1]!] : undefined;
      const feature = await this.#create(
        {
          title: this.#title("Feature:"),
          type: "feature",
          intent: this.#text(12),
          description: this.#text(35),
          plan: this.#text(50),
          parent_id: epic,
          priority: this.#priority(),
          ...(blocker ? { blocked_by: blocker } : {}),
        },
        caller,
      );
      features.push(feature);
      this.manifest.features.push(feature);
    }

    // Leaves and level-3 parents per feature, in the order they are worked on.
    const plan: Array<{ feature: string; tasks: string[]; parents: Array<{ id: string; subtasks: string[] }> }> = [];
    for (const feature of features) {
      const tasks: string[] = [];
      for (let k = 0; k < TASKS_PER_FEATURE; k++) {
        // The first four tasks of a feature form a blocks chain; the last ones are free.
        const blocker = k > 0 && k < 4 ? [tasks[k - 1]!] : undefined;
        tasks.push(await this.#create(this.#taskInput(feature, blocker), caller));
      }
      const parents = tasks
        .slice(TASKS_PER_FEATURE - PARENTS_PER_FEATURE)
        .map((id) => ({ id, subtasks: [] as string[] }));
      for (const parent of parents) {
        for (let s = 0; s < SUBTASKS; s++) {
          const blocker = s > 0 ? [parent.subtasks[s - 1]!] : undefined;
          parent.subtasks.push(
            await this.#create(
              {
                title: this.#title("Step:"),
                description: this.#text(15),
                parent_id: parent.id,
                priority: this.#priority(),
                ...(blocker ? { blocked_by: blocker } : {}),
              },
              caller,
            ),
          );
        }
      }
      plan.push({ feature, tasks, parents });
    }

    // Work, blockers first.
    if (state === "active") {
      await this.#startAndPause(epic, agent);
      for (const feature of features) await this.#startAndPause(feature, agent);
    } else if (state === "fresh") {
      await this.#context(epic, "decision", caller);
    }
    for (const { feature, tasks, parents } of plan) {
      const parentIds = new Set(parents.map((parent) => parent.id));
      for (const parent of parents) {
        for (const id of parent.subtasks) await this.#leaf(id, this.#leafWork(state), agent, 4);
      }
      for (const id of tasks) {
        if (parentIds.has(id)) {
          if (state === "done") await this.#finishContainer(id, caller);
          else if (state === "active") await this.#leaf(id, "notes", agent, 3);
        } else await this.#leaf(id, this.#leafWork(state), agent, 3);
      }
      if (state === "done") await this.#finishContainer(feature, caller);
    }
    if (state === "done") await this.#finishContainer(epic, caller);
    // A few cross-links, as agents record related work.
    const all = plan.flatMap((entry) => entry.tasks);
    const linked = new Set<string>();
    for (let i = 0; i < 4; i++) {
      const a = this.#rng.pick(all);
      const b = this.#rng.pick(all);
      // relates_to is symmetric: one link per pair, whichever way round.
      const pair = a < b ? `${a}:${b}` : `${b}:${a}`;
      if (a === b || linked.has(pair)) continue;
      linked.add(pair);
      await this.#call(() =>
        this.#service.relationship({ action: "add", from_task_id: a, to_task_id: b, type: "relates_to" }, caller),
      );
    }
  }

  #taskInput(feature: string, blocker: string[] | undefined) {
    const type = this.#rng.pick<TaskType | null>([null, null, "bug", "chore", "investigation"]);
    return {
      title: this.#title(type === "bug" ? "Fix" : "Task:"),
      type,
      ...(type === "bug" || type === null ? { intent: this.#text(10) } : {}),
      description: this.#text(30),
      plan: this.#text(30),
      parent_id: feature,
      priority: this.#priority(),
      ...(blocker ? { blocked_by: blocker } : {}),
    };
  }

  #leafWork(state: ProjectState): LeafWork {
    const r = this.#rng.next();
    if (state === "done") return r < 0.95 ? "complete" : "cancel";
    if (state === "active") return r < 0.4 ? "complete" : r < 0.55 ? "progress" : "notes";
    return r < 0.6 ? "notes" : "none";
  }

  // ---- units of work ------------------------------------------------------------------------

  async #leaf(id: string, work: LeafWork, agent: string, level: number): Promise<void> {
    const caller = this.#caller(agent);
    if (work === "none" || work === "notes") {
      if (work === "notes") {
        await this.#context(id, this.#rng.pick(["decision", "note", "reference"]), caller);
        if (this.#rng.chance(0.5)) await this.#steps(id, caller);
      }
      if (level >= 3) this.manifest.openLeaves.push(id);
      return;
    }
    if (work === "cancel") {
      await this.#context(id, "note", caller);
      await this.#call(() => this.#service.updateTask({ task_id: id, status: "cancelled" }, caller));
      return;
    }
    // complete or progress: a session works on it, reads and writes files, records what it learnt.
    const session = this.#caller(agent, `ses-bench-${++this.#sessions}`);
    await this.#call(() => this.#service.startWork({ task_id: id }, session));
    const files = this.#rng.int(2, 6);
    for (let i = 0; i < files; i++) {
      const path = `src/${this.#rng.pick(WORDS)}/${this.#rng.pick(WORDS)}-${this.#rng.int(1, 40)}.ts`;
      await this.#call(() =>
        this.#service.trackFile({ path, operation: this.#rng.chance(0.6) ? "write" : "read" }, session),
      );
    }
    const entries = work === "complete" ? this.#rng.int(3, 7) : this.#rng.int(1, 3);
    let first: string | undefined;
    for (let i = 0; i < entries; i++) {
      const type = this.#rng.pick<ContextType>(["decision", "rationale", "attempt", "outcome", "note", "blocker"]);
      const entry = await this.#context(id, type, session);
      first ??= entry;
    }
    if (first && this.#rng.chance(0.15)) {
      await this.#call(() =>
        this.#service.addContext(
          { task_id: id, type: "decision", content: this.#text(30), supersede_entry_id: first },
          session,
        ),
      );
    }
    const items = await this.#steps(id, session);
    if (work === "complete") {
      if (this.#rng.chance(0.3)) {
        await this.#call(() => this.#service.updateTask({ task_id: id, description: this.#text(30) }, session));
      }
      // Steps are ticked off as the work goes, the last ones together.
      await this.#call(() => this.#service.completeProgress({ item_ids: items.slice(0, 1) }, session));
      await this.#call(() => this.#service.completeProgress({ item_ids: items.slice(1) }, session));
      await this.#call(() => this.#service.updateTask({ task_id: id, status: "completed" }, session));
      await this.#call(() => this.#service.stopWork({ task_id: id }, session));
    } else if (items.length > 1) {
      await this.#call(() => this.#service.completeProgress({ item_ids: items.slice(0, 1) }, session));
    }
    if (level === 3) this.manifest.richLeaves.push(id);
  }

  async #finishContainer(id: string, caller: Caller): Promise<void> {
    await this.#context(id, "outcome", caller);
    await this.#call(() => this.#service.updateTask({ task_id: id, status: "completed" }, caller));
  }

  async #startAndPause(id: string, agent: string): Promise<void> {
    const session = this.#caller(agent, `ses-bench-${++this.#sessions}`);
    await this.#call(() => this.#service.startWork({ task_id: id }, session));
    await this.#context(id, "decision", session);
    await this.#call(() => this.#service.stopWork({ task_id: id }, session));
  }

  async #context(taskId: string, type: ContextType, caller: Caller): Promise<string> {
    const result = await this.#call(() =>
      this.#service.addContext({ task_id: taskId, type, content: this.#text(this.#rng.int(15, 80)) }, caller),
    );
    return result.data.entry.id;
  }

  /** Adds 2-4 progress steps; returns their ids. */
  async #steps(taskId: string, caller: Caller): Promise<string[]> {
    const count = this.#rng.int(2, 4);
    const items = Array.from({ length: count }, () => this.#text(this.#rng.int(5, 12)));
    const result = await this.#call(() => this.#service.addProgress({ task_id: taskId, items }, caller));
    return result.data.items.map((item) => item.id);
  }

  async #create(input: Parameters<ArbeitService["createTask"]>[0], caller?: Caller): Promise<string> {
    const result = await this.#call(() => this.#service.createTask(input, caller ?? this.#caller(this.#agent())));
    return result.data.task.id;
  }

  /** One service call: advances the simulated clock and commits every few thousand calls. */
  async #call<T>(fn: () => Promise<T>): Promise<T> {
    this.#clock.ms += CLOCK_STEP_MS;
    const result = await fn();
    if (++this.#calls % COMMIT_EVERY === 0) this.#store.commit();
    return result;
  }

  // ---- generated values ---------------------------------------------------------------------

  #caller(agent: string, session = `ses-${agent}`): Caller {
    return { session, agent };
  }

  #agent(): string {
    return this.#rng.pick(AGENTS);
  }

  #priority(): number {
    const r = this.#rng.next();
    return r < 0.05 ? 0 : r < 0.25 ? 1 : r < 0.75 ? 2 : r < 0.9 ? 3 : 4;
  }

  #title(prefix: string): string {
    return `${prefix} ${this.#text(this.#rng.int(3, 7))}`;
  }

  #text(words: number): string {
    const out: string[] = [];
    for (let i = 0; i < words; i++) out.push(this.#rng.pick(WORDS));
    return out.join(" ");
  }
}
