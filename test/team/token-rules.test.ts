import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  actingAgent,
  callRefusal,
  expiryFrom,
  sessionOwnerRefusal,
  sessionRefusal,
  type Token,
  type ToolFacts,
  tokenCaller,
  tokenNameProblem,
  tokenState,
} from "../../src/team/token-rules.js";

const NOW = new Date("2026-11-26T12:00:00.000Z");
const agent = { id: "tok-alice001", kind: "agent", name: "alice", read_only: false } as const;
const person = { id: "tok-bob00001", kind: "person", name: "bob", read_only: false } as const;
const reader = { kind: "agent", name: "watcher", read_only: true } as const;

const TOOLS: Record<string, ToolFacts> = {
  arbeit_task_get: { name: "arbeit_task_get", readOnly: true },
  arbeit_query: { name: "arbeit_query", readOnly: true },
  arbeit_task_create: { name: "arbeit_task_create", readOnly: false },
  arbeit_task_claim: { name: "arbeit_task_claim", readOnly: false },
  arbeit_task_update: { name: "arbeit_task_update", readOnly: false },
  arbeit_task_delete: { name: "arbeit_task_delete", readOnly: false },
  arbeit_context_add: { name: "arbeit_context_add", readOnly: false },
  arbeit_batch: { name: "arbeit_batch", readOnly: false },
  arbeit_memory: { name: "arbeit_memory", readOnly: false },
};
const lookup = (name: string) => TOOLS[name];
const refusal = (token: Pick<Token, "kind" | "name" | "read_only">, tool: string, args: unknown) =>
  callRefusal(token, TOOLS[tool]!, args, lookup)?.code ?? "allowed";

describe("what a token may call", () => {
  const cases: Array<[string, Pick<Token, "kind" | "name" | "read_only">, string, unknown, string]> = [
    ["an agent reads", agent, "arbeit_task_get", { task_id: "tkt-a7f3b2c1" }, "allowed"],
    ["an agent writes", agent, "arbeit_task_create", { title: "x" }, "allowed"],
    ["an agent claims", agent, "arbeit_task_claim", { task_id: "tkt-a7f3b2c1" }, "allowed"],
    ["an agent releases its own claim", agent, "arbeit_task_claim", { action: "release", task_id: "t" }, "allowed"],
    ["an agent forces a release", agent, "arbeit_task_claim", { action: "release", force: true }, "FORBIDDEN"],
    ["a person forces a release", person, "arbeit_task_claim", { action: "release", force: true }, "allowed"],
    [
      "an agent forces an update",
      agent,
      "arbeit_task_update",
      { task_id: "t", status: "cancelled", force: true },
      "FORBIDDEN",
    ],
    ["an agent forces a delete", agent, "arbeit_task_delete", { task_id: "t", force: true }, "FORBIDDEN"],
    [
      "a person forces an update",
      person,
      "arbeit_task_update",
      { task_id: "t", status: "cancelled", force: true },
      "allowed",
    ],
    ["a person forces a delete", person, "arbeit_task_delete", { task_id: "t", force: true }, "allowed"],
    ["an agent adds a note", agent, "arbeit_context_add", { type: "note", content: "x" }, "allowed"],
    ["an agent answers a question", agent, "arbeit_context_add", { type: "user_input", content: "x" }, "FORBIDDEN"],
    ["a person answers a question", person, "arbeit_context_add", { type: "user_input", content: "x" }, "allowed"],
    ["a read-only token reads", reader, "arbeit_query", { query: "ready" }, "allowed"],
    ["a read-only token writes", reader, "arbeit_task_create", { title: "x" }, "FORBIDDEN"],
    [
      "an agent answers inside a batch",
      agent,
      "arbeit_batch",
      { operations: [{ tool: "arbeit_context_add", args: { type: "user_input" } }] },
      "FORBIDDEN",
    ],
    [
      "an agent forces a release inside a batch",
      agent,
      "arbeit_batch",
      {
        operations: [
          { tool: "arbeit_task_create", args: {} },
          { tool: "arbeit_task_claim", args: { force: true } },
        ],
      },
      "FORBIDDEN",
    ],
    [
      "an agent forces a delete inside a batch",
      agent,
      "arbeit_batch",
      { operations: [{ tool: "arbeit_task_delete", args: { task_id: "t", force: true } }] },
      "FORBIDDEN",
    ],
    [
      "an agent's batch of plain writes",
      agent,
      "arbeit_batch",
      { operations: [{ tool: "arbeit_task_create" }] },
      "allowed",
    ],
    ["an agent sets its own memory", agent, "arbeit_memory", { action: "set", scope: "agent", key: "k" }, "allowed"],
    [
      "an agent sets its memory by name",
      agent,
      "arbeit_memory",
      { action: "set", scope: "agent", scope_id: "alice", key: "k" },
      "allowed",
    ],
    [
      "an agent sets another agent's memory",
      agent,
      "arbeit_memory",
      { action: "set", scope: "agent", scope_id: "carol", key: "k" },
      "FORBIDDEN",
    ],
    [
      "an agent deletes another agent's memory",
      agent,
      "arbeit_memory",
      { action: "delete", scope: "agent", scope_id: "carol", key: "k" },
      "FORBIDDEN",
    ],
    [
      "an agent reads another agent's memory",
      agent,
      "arbeit_memory",
      { action: "get", scope: "agent", scope_id: "carol", key: "k" },
      "allowed",
    ],
    [
      "an agent switches reservations to warnings for everyone",
      agent,
      "arbeit_memory",
      { action: "set", key: "reservations.enforce", value: "warn" },
      "FORBIDDEN",
    ],
    [
      "an agent merges the reservations switch away",
      agent,
      "arbeit_memory",
      { action: "merge", keys: ["notes", "reservations.enforce"] },
      "FORBIDDEN",
    ],
    [
      "an agent sets a list key of the same name (no switch)",
      agent,
      "arbeit_memory",
      { action: "set", scope: "list", key: "reservations.enforce", value: "warn" },
      "allowed",
    ],
    [
      "a person switches reservations to warnings",
      person,
      "arbeit_memory",
      { action: "set", key: "reservations.enforce", value: "warn" },
      "allowed",
    ],
    ["an agent picks a session", agent, "arbeit_task_get", { session: "laptop-1" }, "allowed"],
    ["an agent takes its own agent session", agent, "arbeit_task_get", { session: "agent:alice" }, "allowed"],
    ["an agent takes another agent's session", agent, "arbeit_task_get", { session: "agent:carol" }, "FORBIDDEN"],
    ["an agent takes a person's agent session", agent, "arbeit_task_get", { session: "agent:human:bob" }, "FORBIDDEN"],
  ];
  for (const [what, token, tool, args, expected] of cases)
    it(`${what}: ${expected}`, () => assert.equal(refusal(token, tool, args), expected));

  it("a refusal inside a batch names the operation", () => {
    const error = callRefusal(
      agent,
      TOOLS.arbeit_batch!,
      { operations: [{}, { tool: "arbeit_task_claim", args: { force: true } }] },
      lookup,
    );
    assert.equal(error?.details?.operation_index, 1);
    assert.match(error!.message, /^Operation 1 \(arbeit_task_claim\)/);
  });
});

describe("who a token is", () => {
  it("an agent token acts under the agent's name; a person's as human:<name>", () => {
    assert.equal(actingAgent(agent), "alice");
    assert.equal(actingAgent(person), "human:bob");
  });
  it("the caller picks the session; without one it is the agent's own", () => {
    assert.deepEqual(tokenCaller(agent, "laptop-1"), { agent: "alice", session: "laptop-1", token: "tok-alice001" });
    assert.deepEqual(tokenCaller(person, undefined), {
      agent: "human:bob",
      session: "agent:human:bob",
      token: "tok-bob00001",
    });
    assert.equal(sessionRefusal(person, "agent:human:bob"), undefined);
  });
  const names: Array<["agent" | "person", string, boolean]> = [
    ["agent", "alice", true],
    ["agent", "human:alice", false],
    ["person", "bob", true],
    ["person", "human:bob", false],
    ["agent", "", false],
    ["agent", "   ", false],
    ["agent", "x".repeat(129), false],
    ["person", "x".repeat(123), false],
  ];
  for (const [kind, name, ok] of names)
    it(`${kind} name ${JSON.stringify(name.length > 20 ? `${name.length} characters` : name)}: ${ok ? "valid" : "refused"}`, () =>
      assert.equal(tokenNameProblem(kind, name) === undefined, ok));
});

describe("whose session it is", () => {
  const owners: Array<[string, readonly string[], string]> = [
    ["a session nobody used", [], "allowed"],
    ["a session the agent used", ["alice"], "allowed"],
    ["a session another agent used", ["carol"], "FORBIDDEN"],
    ["a session a person used", ["human:bob"], "FORBIDDEN"],
    ["a session used by the agent and another", ["alice", "carol"], "FORBIDDEN"],
  ];
  for (const [what, agents, expected] of owners)
    it(`${what}: ${expected}`, () =>
      assert.equal(sessionOwnerRefusal(agent, "desk-1", agents)?.code ?? "allowed", expected));
});

describe("a token's state and expiry", () => {
  const states: Array<[string | null, string | null, string]> = [
    [null, null, "active"],
    ["2026-11-26T12:00:00.001Z", null, "active"],
    ["2026-11-26T12:00:00.000Z", null, "expired"],
    [null, "2026-11-26T11:00:00.000Z", "revoked"],
    ["2026-11-26T11:00:00.000Z", "2026-11-26T10:00:00.000Z", "revoked"],
  ];
  for (const [expires_at, revoked_at, state] of states)
    it(`expires ${expires_at ?? "never"}, revoked ${revoked_at ?? "no"}: ${state}`, () =>
      assert.equal(tokenState({ expires_at, revoked_at }, NOW.toISOString()), state));

  const expiries: Array<[string, string | undefined]> = [
    ["12h", "2026-11-27T00:00:00.000Z"],
    ["30d", "2026-12-26T12:00:00.000Z"],
    ["2w", "2026-12-10T12:00:00.000Z"],
    ["2027-01-31", "2027-01-31T00:00:00.000Z"],
    ["2027-01-31T08:30:00Z", "2027-01-31T08:30:00.000Z"],
    ["0d", undefined],
    ["2020-01-01", undefined],
    ["soon", undefined],
    ["30", undefined],
    ["2027-13-45", undefined],
  ];
  for (const [text, expected] of expiries)
    it(`--expires ${text}: ${expected ?? "INVALID_ARGUMENT"}`, () => {
      if (expected) assert.equal(expiryFrom(text, NOW), expected);
      else assert.throws(() => expiryFrom(text, NOW), { code: "INVALID_ARGUMENT" });
    });
});
