import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ContextEntry, ProgressItem, Task } from "../../src/domain/types.js";
import { taskFragment } from "../../src/fragments/task-fragment.js";
import { tasksFragment } from "../../src/fragments/tasks-fragment.js";
import type { Briefing } from "../../src/service/briefing.js";
import { summarize, summarizeProgress } from "../../src/service/summaries.js";
import { taskFixture } from "../helpers/fixtures.js";

const T0 = "2026-01-01T00:00:00.000Z";

const task = (overrides: Partial<Task> = {}): Task => taskFixture(overrides);

function entry(
  id: string,
  type: ContextEntry["type"],
  content: string,
  superseded_by: string | null = null,
): ContextEntry {
  return { id, task_id: "tkt-abc00002", type, content, metadata: null, superseded_by, created_at: T0 };
}

function item(id: string, content: string, completed: boolean): ProgressItem {
  return { id, task_id: "tkt-abc00002", content, completed, created_at: T0, completed_at: completed ? T0 : null };
}

describe("taskFragment", () => {
  const cases: [string, Task | Briefing, string][] = [
    ["a bare open task", task(), "Task tkt-abc00002 [open] Implement session timeout"],
    [
      "a claim's lease",
      task({ owner: "agent-a", lease_expires_at: "2026-01-01T00:15:00.000Z" }),
      "Task tkt-abc00002 [open] Implement session timeout · owner agent-a (lease until 2026-01-01T00:15:00.000Z)",
    ],
    [
      "its risk and impact, when assessed",
      task({ risk: "high", impact: "medium" }),
      "Task tkt-abc00002 [open] Implement session timeout · high risk · medium impact",
    ],
    [
      "type, priority, owner, parent and what it is doing",
      task({
        type: "feature",
        status: "in_progress",
        priority: 0,
        owner: "claude",
        parent_id: "tkt-abc00001",
        active_form: "Adding the idle hook",
      }),
      "Task tkt-abc00002 [in_progress] Implement session timeout · feature · priority 0 · owner claude · parent tkt-abc00001 · doing: Adding the idle hook",
    ],
    [
      "unfinished and finished blockers",
      task({ blocked_by: ["tkt-abc00003"], blocked: true }),
      "Task tkt-abc00002 [open] Implement session timeout · blocked by tkt-abc00003",
    ],
    [
      "blockers that are done",
      task({ blocked_by: ["tkt-abc00003"], blocked: false }),
      "Task tkt-abc00002 [open] Implement session timeout · blockers done: tkt-abc00003",
    ],
    [
      "intent, description and a multi-line plan",
      task({
        intent: "Sessions never expire",
        description: "Log out after 30 idle minutes",
        plan: "1. Hook\n2. Warning\n\n",
      }),
      [
        "Task tkt-abc00002 [open] Implement session timeout",
        "  intent: Sessions never expire",
        "  description: Log out after 30 idle minutes",
        "  plan:",
        "    1. Hook",
        "    2. Warning",
      ].join("\n"),
    ],
    [
      "a title with line breaks stays on one line",
      task({ title: "Fix\n  the   login" }),
      "Task tkt-abc00002 [open] Fix the login",
    ],
    [
      "a briefing with context, progress, parent, children and files",
      {
        task: task({ status: "in_progress", parent_id: "tkt-abc00001" }),
        context_all: [
          entry("ctx-00000001", "decision", "Use localStorage"),
          entry("ctx-00000002", "blocker", "30 or 60 minutes?", "ctx-00000003"),
          entry("ctx-00000003", "blocker", "30 minutes,\nconfirmed by the user"),
        ],
        progress: [item("prg-00000001", "Create hook", true), item("prg-00000002", "Add tests", false)],
        parent: summarize(task({ id: "tkt-abc00001", title: "Auth security", type: "epic" })),
        children: [],
        files: [{ file_path: "src/idle.ts", operations: ["read", "write"], sessions: 1, last_at: T0 }],
      },
      [
        "Task tkt-abc00002 [in_progress] Implement session timeout · parent tkt-abc00001",
        "  context:",
        "    - decision: Use localStorage",
        "    - blocker (superseded by ctx-00000003): 30 or 60 minutes?",
        "    - blocker:",
        "      30 minutes,",
        "      confirmed by the user",
        "  progress (1/2 done):",
        "    [x] Create hook",
        "    [ ] Add tests",
        "  parent: tkt-abc00001 [open] Auth security · epic",
        "  children: none",
        "  files: src/idle.ts (read, write)",
      ].join("\n"),
    ],
    [
      "a briefing with only a progress summary, blockers and no parent",
      {
        task: task({ blocked_by: ["tkt-abc00003"], blocked: true }),
        progress_summary: summarizeProgress([
          item("prg-00000001", "Create hook", true),
          item("prg-00000002", "Add tests", false),
        ]),
        parent: null,
        blocked_by: [summarize(task({ id: "tkt-abc00003", title: "Decide duration", status: "in_progress" }))],
        context: [],
      },
      [
        "Task tkt-abc00002 [open] Implement session timeout · blocked by tkt-abc00003",
        "  context: none",
        "  progress (1/2 done), remaining:",
        "    [ ] Add tests (prg-00000002)",
        "  parent: none",
        "  blocked by:",
        "    - tkt-abc00003 [in_progress] Decide duration",
      ].join("\n"),
    ],
  ];
  for (const [name, input, expected] of cases) {
    it(name, () => assert.equal(taskFragment(input), expected));
  }

  it("accepts the summaries listings return", () => {
    assert.equal(
      taskFragment(summarize(task({ intent: "hidden in summaries" }))),
      "Task tkt-abc00002 [open] Implement session timeout",
    );
  });
});

describe("tasksFragment", () => {
  const cases: [string, Parameters<typeof tasksFragment>, string][] = [
    ["no tasks", [[]], "Tasks: none."],
    ["no tasks, own heading", [[], { heading: "Ready" }], "Ready: none."],
    [
      "a small plan",
      [
        [
          task({ id: "tkt-abc00001", title: "Auth Security Improvements", type: "epic" }),
          summarize(task({ status: "in_progress", parent_id: "tkt-abc00001" })),
          task({
            id: "tkt-abc00003",
            title: "Rate limiting",
            blocked_by: ["tkt-abc00002"],
            blocked: true,
            priority: 3,
          }),
        ],
      ],
      [
        "Tasks (3):",
        "- tkt-abc00001 [open] Auth Security Improvements · epic",
        "- tkt-abc00002 [in_progress] Implement session timeout · parent tkt-abc00001",
        "- tkt-abc00003 [open] Rate limiting · priority 3 · blocked by tkt-abc00002",
      ].join("\n"),
    ],
    [
      "heavy fields are left out",
      [[task({ description: "long text" })], { heading: "Ready tasks" }],
      "Ready tasks (1):\n- tkt-abc00002 [open] Implement session timeout",
    ],
  ];
  for (const [name, args, expected] of cases) {
    it(name, () => assert.equal(tasksFragment(...args), expected));
  }
});
