import type { TaskType } from "./types.js";

/** Plan templates: recommended structures, never enforced. */
export const TEMPLATE_NAMES = ["epic", "feature", "bug", "investigation", "chore"] as const;
export type TemplateName = (typeof TEMPLATE_NAMES)[number];

export interface Template {
  name: TemplateName;
  type: TaskType;
  /** A few words on when to pick it; every tool schema carries them, so they stay short. */
  use_for: string;
  notes: string;
  plan_template: string;
}

const stub = (sections: Array<[string, string]>) =>
  ["Plan:", ...sections.flatMap(([head, hint]) => [`- ${head}:`, `  - <${hint}>`])].join("\n");

export const TEMPLATES: Record<TemplateName, Template> = {
  epic: {
    name: "epic",
    type: "epic",
    use_for: "goal spanning tasks",
    notes: "High-level scope and goals",
    plan_template: stub([
      ["Goals", "outcomes to deliver"],
      ["Milestones", "major phases/modules"],
      ["Dependencies", "blocking work"],
    ]),
  },
  feature: {
    name: "feature",
    type: "feature",
    use_for: "new behaviour",
    notes: "Implementation-focused",
    plan_template: stub([
      ["Changes", "steps"],
      ["Files", "files or areas"],
      ["Tests", "tests to run/add"],
      ["Risks", "edge cases"],
    ]),
  },
  bug: {
    name: "bug",
    type: "bug",
    use_for: "a defect",
    notes: "Requires repro and verification",
    plan_template: stub([
      ["Repro", "steps"],
      ["Fix", "approach"],
      ["Tests", "coverage"],
      ["Verify", "validation steps"],
    ]),
  },
  investigation: {
    name: "investigation",
    type: "investigation",
    use_for: "research",
    notes: "Requires a research plan",
    plan_template: stub([
      ["Questions", "what to answer"],
      ["Sources", "files/docs/experiments"],
      ["Output", "decision + recommendation"],
    ]),
  },
  chore: {
    name: "chore",
    type: "chore",
    use_for: "upkeep",
    notes: "Operational or maintenance work",
    plan_template: stub([
      ["Changes", "steps"],
      ["Files", "files or areas"],
      ["Tests", "tests to run"],
      ["Safety", "backups/rollback"],
    ]),
  },
};

/** "epic: multi-task goal; feature: ...": what each template is for, in one line. */
export function templateGuide(): string {
  return TEMPLATE_NAMES.map((name) => `${name}: ${TEMPLATES[name].use_for}`).join("; ");
}
