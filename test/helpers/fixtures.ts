import type { Task } from "../../src/domain/types.js";

/** A plain open task with every field set, for pure-function tests; override what matters. */
export function taskFixture(overrides: Partial<Task> = {}): Task {
  const at = "2026-01-01T00:00:00.000Z";
  return {
    id: "tkt-abc00002",
    list_id: "default",
    title: "Implement session timeout",
    type: null,
    status: "open",
    intent: null,
    description: null,
    plan: null,
    parent_id: null,
    blocked_by: [],
    blocks: [],
    blocked: false,
    priority: 2,
    risk: null,
    impact: null,
    owner: null,
    lease_expires_at: null,
    claim_session: null,
    active_form: null,
    metadata: null,
    version: 1,
    created_at: at,
    updated_at: at,
    ...overrides,
  };
}
