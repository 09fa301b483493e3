import type { TestProject } from "../helpers/service.js";

/**
 * Fills a project through the real catalogue with a bit of everything an agent team leaves
 * behind: a hierarchy up to 4 levels, blockers, context with supersede chains, progress, work
 * sessions with tracked files, claims, memory, removed relationships and deleted tasks.
 * Deterministic for a given `tasks` count. With `oneTransaction` the whole run commits once,
 * which makes thousands of tasks quick to build.
 */
export interface Populated {
  tasks: string[];
  deleted: string[];
  blocker: string;
  blocked: string;
}

const TYPES = [null, "feature", "bug", "chore", "investigation", "epic"] as const;

export async function populate(
  project: TestProject,
  options: { tasks: number; oneTransaction?: boolean },
): Promise<Populated> {
  const run = () => fill(project, options.tasks);
  return options.oneTransaction ? project.store.write(run) : run();
}

async function fill(project: TestProject, count: number): Promise<Populated> {
  const { ok } = project;
  const tasks: string[] = [];
  const level = new Map<string, number>();
  const hasChildren = new Set<string>();
  const isBlocker = new Set<string>();
  const deleted: string[] = [];
  let lastContext: string | undefined;
  let rng = 12345;
  const random = (n: number) => {
    rng = (rng * 1103515245 + 12345) % 2 ** 31;
    return rng % n;
  };
  const gone = new Set<string>();
  /** A live task created before this one. */
  const pick = (): string | undefined => {
    for (let tries = 0; tries < 8 && tasks.length > 0; tries++) {
      const id = tasks[random(tasks.length)]!;
      if (!gone.has(id)) return id;
    }
    return undefined;
  };

  for (let i = 0; i < count; i++) {
    project.clock.advance(1000 + random(60_000));
    const type = TYPES[i % TYPES.length]!;
    const args: Record<string, unknown> = {
      title: `Task ${i}: ${["fix", "add", "investigate", "refactor"][i % 4]} “${i}” ✓`,
      priority: i % 5,
      ...(type ? { type } : {}),
      intent: `Why ${i}`,
      description: `What ${i}\nsecond line`,
      plan: `1. step\n2. step ${i}`,
      ...(i % 9 === 0 ? { list_id: "ops" } : {}),
      ...(i % 3 === 0 ? { metadata: { jira: `PAY-${i}`, points: i % 8, labels: ["populate"] } } : {}),
    };
    const parentCandidate = pick();
    if (parentCandidate && i % 3 === 1 && (level.get(parentCandidate) ?? 1) < 4) args.parent_id = parentCandidate;
    const blockerCandidate = pick();
    if (blockerCandidate && i % 4 === 2) args.blocked_by = [blockerCandidate];
    const { task } = await ok("arbeit_task_create", args);
    tasks.push(task.id);
    level.set(task.id, args.parent_id ? (level.get(args.parent_id as string) ?? 1) + 1 : 1);
    if (args.parent_id) hasChildren.add(args.parent_id as string);
    for (const b of (args.blocked_by as string[] | undefined) ?? []) isBlocker.add(b);

    const supersede = i % 5 === 4 && lastContext ? { supersede_entry_id: lastContext } : {};
    const context = await ok("arbeit_context_add", {
      task_id: supersede.supersede_entry_id ? tasks[i - 1] : task.id,
      type: ["decision", "attempt", "outcome", "note"][i % 4],
      content: `Context ${i}: use the 'quoted' approach; \`code\` and ${"x".repeat(i % 50)}`,
      ...(i % 2 === 0 ? { metadata: { source: "populate", i } } : {}),
      ...supersede,
    });
    lastContext = supersede.supersede_entry_id ? undefined : context.entry.id;
    if (supersede.supersede_entry_id) lastContext = undefined;

    const { items } = await ok("arbeit_progress_add", {
      task_id: task.id,
      items: [`step A of ${i}`, `step B of ${i}`],
    });
    if (i % 3 === 0) await ok("arbeit_progress_complete", { item_ids: [items[0].id] });

    const related = pick();
    if (i % 7 === 6 && related && related !== task.id) {
      await ok("arbeit_relationship", {
        action: "add",
        type: "relates_to",
        from_task_id: task.id,
        to_task_id: related,
        metadata: { why: `link ${i}` },
      });
    }
    if (i % 11 === 5) {
      const session = `ses-populate-${i}`;
      await ok("arbeit_task_start_work", { task_id: task.id }, { session });
      await project.service.trackFile(
        { path: `src/file-${i % 13}.ts`, operation: i % 2 ? "read" : "write" },
        {
          session,
          agent: "populate",
        },
      );
      await ok("arbeit_task_stop_work", { task_id: task.id }, { session });
      // start_work claimed the task for the caller; a tidy agent lets go when it stops.
      await ok("arbeit_task_claim", { task_id: task.id, action: "release" });
    }
    if (i % 17 === 3) {
      await ok("arbeit_task_claim", { task_id: task.id, lease_seconds: 3600 });
      await ok("arbeit_task_claim", { task_id: task.id, action: "renew", lease_seconds: 7200 });
      await ok("arbeit_task_claim", { task_id: task.id, action: "release" });
    }
    if (i % 13 === 12) await ok("arbeit_task_update", { task_id: task.id, status: "completed" });
    // Metadata merged after the fact: a key replaced, one removed, one added.
    if (i % 6 === 0)
      await ok("arbeit_task_update", { task_id: task.id, metadata: { points: 8, labels: null, done: i } });
    if (i % 23 === 0) await ok("arbeit_memory", { action: "set", key: `note-${i}`, value: { i, text: "remember" } });
    // Set again: a reinforced entry, whose count an export and import must carry.
    if (i % 46 === 0) await ok("arbeit_memory", { action: "set", key: `note-${i}`, value: { i, text: "remembered" } });
    if (i % 19 === 18) {
      // A leaf that blocks nothing, unlinked first, so no relationship is left pointing at it.
      const victim = tasks[i - 1]!;
      if (!hasChildren.has(victim) && !isBlocker.has(victim) && !deleted.includes(victim)) {
        const { relationships } = await ok("arbeit_task_get", { task_id: victim, include: ["relationships"] });
        for (const rel of relationships) {
          await ok("arbeit_relationship", {
            action: "remove",
            type: rel.type,
            from_task_id: rel.from_task_id,
            to_task_id: rel.to_task_id,
          });
        }
        await ok("arbeit_task_delete", { task_id: victim });
        deleted.push(victim);
        gone.add(victim);
      }
    }
  }
  const blocker = (await ok("arbeit_task_create", { title: "a blocker" })).task.id;
  const blocked = (await ok("arbeit_task_create", { title: "a blocked task", blocked_by: [blocker] })).task.id;
  return { tasks, deleted, blocker, blocked };
}
