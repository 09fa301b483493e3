import { redactSecrets } from "../domain/secrets.js";
import { LIMITS } from "../schemas/limits.js";
import type { ArbeitService } from "./arbeit-service.js";
import type { Caller } from "./caller.js";
import { type HostListItem, mirrorHostSteps, stepText } from "./host-steps.js";

/**
 * A plan the person approved in a host (Claude Code's ExitPlanMode, OpenCode's plan_exit) becomes
 * Arbeit work:
 *
 * - On the session's active task the plan is added as a `decision` context entry; with no active
 *   task a new task is created with the plan as its `plan`, titled by the plan's first line (a
 *   heading's marks and a leading `Plan:` dropped), and the session starts work on it.
 * - The plan's steps become progress items of that task: its top-level numbered items (`1.`,
 *   `2)`) and checklist items (`- [ ]`, done when checked `- [x]`). Plain bullets are not steps: a
 *   plan lists files, risks and notes that way.
 * - A heading that is itself numbered (`## 1. Parser`, `### Step 2: Tests`, `## Phase 3 - Ship`)
 *   asks for a subtask: one child task per such heading (found again by its title), whose
 *   progress items are the list items under it, bullets included.
 *
 * Recording the same plan twice adds nothing twice: the entry is not repeated, subtasks are found
 * by title, and steps are mirrored by the rule every host shares (src/service/host-steps.ts).
 */

export interface PlanOutline {
  title: string;
  /** Steps of the plan's own task. */
  steps: HostListItem[];
  /** Subtasks, by numbered heading. */
  sections: Array<{ title: string; steps: HostListItem[] }>;
}

export interface RecordedPlan {
  task_id: string;
  /** True when the plan made a new task (there was no active one). */
  created: boolean;
  steps: number;
  subtasks: string[];
}

const HEADING = /^(#{1,6})\s+(.*?)\s*#*\s*$/;
const NUMBERED_HEADING =
  /^(?:(?:step|phase|part|stage|milestone|task)\s+)?\d+[.):]?(?:\s*[-\u2013\u2014:.]\s*|\s+)(.+)$/i;
const NUMBERED_ITEM = /^\d+[.)]\s+(.+)$/;
const CHECK_ITEM = /^[-*+]\s+\[([ xX])\]\s+(.+)$/;
const BULLET_ITEM = /^[-*+]\s+(.+)$/;

/** Markdown emphasis and code marks around a step's words, which a progress item need not keep. */
const plain = (text: string) => stepText(text.replace(/\*\*|__|`/g, ""));

export function outlinePlan(plan: string): PlanOutline {
  let title: string | undefined;
  const steps: HostListItem[] = [];
  const sections: PlanOutline["sections"] = [];
  let section: PlanOutline["sections"][number] | undefined;
  let fenced = false;
  for (const raw of plan.split("\n")) {
    if (/^\s*(```|~~~)/.test(raw)) {
      fenced = !fenced;
      continue;
    }
    if (fenced || raw.trim() === "") continue;
    const heading = HEADING.exec(raw);
    title ??= (heading?.[2] ?? raw.trim()).replace(/^plan\s*[:\-\u2013\u2014]\s*/i, "") || raw.trim();
    if (heading) {
      const text = heading[2]!;
      const numbered = heading[1]!.length > 1 ? NUMBERED_HEADING.exec(text) : null;
      section = numbered ? { title: plain(text).slice(0, LIMITS.title), steps: [] } : undefined;
      if (section) sections.push(section);
      continue;
    }
    // Only top-level items: an indented item details the step above it.
    if (/^\s/.test(raw)) continue;
    const check = CHECK_ITEM.exec(raw);
    const numbered = check ? null : NUMBERED_ITEM.exec(raw);
    const bullet = check || numbered || !section ? null : BULLET_ITEM.exec(raw);
    const text = check?.[2] ?? numbered?.[1] ?? bullet?.[1];
    if (text === undefined || plain(text) === "") continue;
    const step: HostListItem = { content: plain(text), status: check && check[1] !== " " ? "completed" : "pending" };
    (section?.steps ?? steps).push(step);
  }
  const name = plain(title ?? "Plan").slice(0, LIMITS.title) || "Plan";
  return { title: name, steps, sections };
}

/** The plan as a context entry's or a task's text, within its limit. */
const planText = (plan: string, max: number) => (plan.length <= max ? plan : `${plan.slice(0, max - 1)}\u2026`);

/**
 * Records an approved `plan` for the caller's session (see above); undefined when there is no
 * session to record it for, or the plan is empty.
 */
export async function recordPlan(
  service: ArbeitService,
  caller: Caller,
  given: string,
  host: string,
): Promise<RecordedPlan | undefined> {
  // Compared with the entry as it was stored: without secrets (see ArbeitService).
  const plan = redactSecrets(given);
  if (!caller.session || plan.trim() === "") return undefined;
  const outline = outlinePlan(plan);
  const work = await service.sessionTask(caller.session);
  let taskId: string;
  let created = false;
  if (work?.active) {
    taskId = work.task_id;
    const heading = `Plan approved in ${host}:\n\n`;
    const content = heading + planText(plan, LIMITS.context_content - heading.length);
    const { data } = await service.getTask({ task_id: taskId, include: ["context"] });
    if (!(data.context ?? []).some((entry) => entry.content === content))
      await service.addContext({ task_id: taskId, type: "decision", content }, caller);
  } else {
    const { data } = await service.createTask({ title: outline.title, plan: planText(plan, LIMITS.text) }, caller);
    taskId = data.task.id;
    created = true;
    await service.startWork({ task_id: taskId }, caller);
  }
  await mirrorHostSteps(service, caller, outline.steps, taskId);
  const subtasks: string[] = [];
  if (outline.sections.length > 0) {
    const { data } = await service.getTask({ task_id: taskId, include: ["children"] });
    const children = new Map((data.children ?? []).map((child) => [child.title, child.id]));
    for (const section of outline.sections) {
      let childId = children.get(section.title);
      if (childId === undefined) {
        childId = (await service.createTask({ title: section.title, parent_id: taskId }, caller)).data.task.id;
        children.set(section.title, childId);
      }
      subtasks.push(childId);
      await mirrorHostSteps(service, caller, section.steps, childId);
    }
  }
  return { task_id: taskId, created, steps: outline.steps.length, subtasks };
}
