import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { generateText, isStepCount, type ToolSet } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { createArbeitTools } from "../../src/ai-sdk/create-arbeit-tools.js";
import { toolInputJsonSchema } from "../../src/mcp/tool-json-schema.js";
import { ArbeitService } from "../../src/service/arbeit-service.js";
import { InMemoryTaskStore, SqliteTaskStore } from "../../src/store/sqlite/sqlite-task-store.js";
import { TOOLS } from "../../src/tools/catalogue.js";
import { tempDir } from "../helpers/temp.js";

type Generated = Awaited<ReturnType<MockLanguageModelV4["doGenerate"]>>;
type CallOptions = Parameters<MockLanguageModelV4["doGenerate"]>[0];
type Call = { toolName: string; input: unknown };

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 10, text: 10, reasoning: undefined },
};

function toolCalls(calls: Call[]): Generated {
  return {
    content: calls.map((call, i) => ({
      type: "tool-call" as const,
      toolCallId: `call-${call.toolName}-${i}-${Math.random().toString(36).slice(2, 8)}`,
      toolName: call.toolName,
      input: JSON.stringify(call.input),
    })),
    finishReason: { unified: "tool-calls", raw: undefined },
    usage,
    warnings: [],
  };
}

function text(value: string): Generated {
  return {
    content: [{ type: "text", text: value }],
    finishReason: { unified: "stop", raw: undefined },
    usage,
    warnings: [],
  };
}

/** Tool results the model has seen so far, newest last, as the SDK hands them back to the model. */
function toolResults(options: CallOptions): { toolName: string; value: any }[] {
  const results: { toolName: string; value: any }[] = [];
  for (const message of options.prompt) {
    if (message.role !== "tool") continue;
    for (const part of message.content) {
      if (part.type === "tool-result") results.push({ toolName: part.toolName, value: (part.output as any).value });
    }
  }
  return results;
}

/**
 * A scripted model that decides each step from what is in the conversation, like a real one:
 * create a task; start work on it and record a decision; try a bad status; then answer.
 */
function scriptedModel(): MockLanguageModelV4 {
  return new MockLanguageModelV4({
    doGenerate: async (options) => {
      const results = toolResults(options);
      const created = results.find((r) => r.toolName === "arbeit_task_create");
      if (!created) {
        return toolCalls([
          {
            toolName: "arbeit_task_create",
            input: { title: "Fix login timeout", intent: "Users are logged out after a minute" },
          },
        ]);
      }
      const taskId = created.value.data.task.id;
      if (!results.some((r) => r.toolName === "arbeit_task_start_work")) {
        return toolCalls([
          { toolName: "arbeit_task_start_work", input: { task_id: taskId } },
          {
            toolName: "arbeit_context_add",
            input: { task_id: taskId, type: "decision", content: "Refresh the token on activity" },
          },
        ]);
      }
      if (!results.some((r) => r.toolName === "arbeit_task_update")) {
        return toolCalls([{ toolName: "arbeit_task_update", input: { task_id: taskId, status: "done" } }]);
      }
      return text("Started the task and recorded the decision.");
    },
  });
}

async function fileProject() {
  const { dir, cleanup } = tempDir();
  mkdirSync(join(dir, ".arbeit"));
  const store = await SqliteTaskStore.open(join(dir, ".arbeit", "arbeit.db"));
  return { dir, store, cleanup };
}

describe("createArbeitTools (AI SDK)", () => {
  it("runs a model's tool calls against a real SQLite store and returns envelopes", async () => {
    const { dir, store, cleanup } = await fileProject();
    try {
      const model = scriptedModel();
      const tools = createArbeitTools(store, { agent: "planner", session: "conv-1", projectRoot: dir });
      const result = await generateText({
        model,
        tools,
        stopWhen: isStepCount(6),
        prompt: "Fix the login timeout.",
      });
      assert.equal(result.text, "Started the task and recorded the decision.");

      const results = result.steps.flatMap((step) => step.toolResults);
      assert.deepEqual(
        results.map((r) => r.toolName),
        ["arbeit_task_create", "arbeit_task_start_work", "arbeit_context_add", "arbeit_task_update"],
      );
      const [created, started, context, badUpdate] = results.map((r) => r.output as any);
      assert.equal(created.success, true);
      assert.equal(started.success, true);
      assert.equal(started.data.session_id, "conv-1");
      assert.equal(context.success, true);
      // A bad argument is our envelope with our code, handed to the model as a normal tool result.
      assert.equal(badUpdate.success, false);
      assert.equal(badUpdate.error.code, "INVALID_STATUS");
      assert.ok(badUpdate.error.suggestions.length > 0);
      assert.equal(result.steps.flatMap((step) => step.content).filter((p) => p.type === "tool-error").length, 0);

      // The database, read back through a fresh store on the same file.
      await store.close();
      const reopened = await SqliteTaskStore.open(join(dir, ".arbeit", "arbeit.db"));
      const service = new ArbeitService(reopened, { projectRoot: dir });
      const taskId = created.data.task.id as string;
      const briefing = (await service.getTask({ task_id: taskId, include: ["context", "sessions", "recent_events"] }))
        .data;
      assert.equal(briefing.task.status, "in_progress");
      assert.equal(briefing.task.intent, "Users are logged out after a minute");
      assert.deepEqual(
        briefing.context?.map((entry) => [entry.type, entry.content]),
        [["decision", "Refresh the token on activity"]],
      );
      assert.deepEqual(
        briefing.sessions?.map((link) => [link.session_id, link.agent]),
        [["conv-1", "planner"]],
      );
      assert.ok(briefing.recent_events?.every((event) => event.agent === "planner"));
      await reopened.close();
    } finally {
      cleanup();
    }
  });

  /** A schema as the AI SDK hands it on: every object that does not say otherwise is closed. */
  const closed = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(closed);
    if (typeof node !== "object" || node === null) return node;
    const out = Object.fromEntries(Object.entries(node).map(([key, value]) => [key, closed(value)]));
    return out.type === "object" && !("additionalProperties" in out) ? { ...out, additionalProperties: false } : out;
  };

  it("shows the model each tool's real JSON Schema and description", async () => {
    const store = await InMemoryTaskStore.open();
    const model = new MockLanguageModelV4({ doGenerate: async () => text("ok") });
    await generateText({ model, tools: createArbeitTools(store), prompt: "hi" });
    const sent = model.doGenerateCalls[0]!.tools ?? [];
    const byName = new Map(sent.map((tool) => [tool.name, tool]));
    for (const tool of TOOLS.filter((t) => t.name !== "arbeit_init")) {
      const seen = byName.get(tool.name) as { description?: string; inputSchema: Record<string, unknown> } | undefined;
      assert.ok(seen, `${tool.name} is offered to the model`);
      assert.equal(seen.description, tool.description);
      assert.deepEqual(seen.inputSchema, closed(toolInputJsonSchema(tool)));
    }
    await store.close();
  });

  it("keys tools by catalogue name and leaves out arbeit_init", async () => {
    const store = await InMemoryTaskStore.open();
    const tools = createArbeitTools(store);
    assert.deepEqual(
      Object.keys(tools),
      TOOLS.map((t) => t.name).filter((n) => n !== "arbeit_init"),
    );
    // The set is an AI SDK ToolSet as far as the compiler is concerned.
    const asToolSet: ToolSet = tools;
    assert.ok(asToolSet.arbeit_task_create);
    await store.close();
  });

  it("scopes to listId and takes an ArbeitService as well as a store", async () => {
    const store = await InMemoryTaskStore.open();
    const service = new ArbeitService(store, { projectRoot: "/project" });
    const inA = createArbeitTools(service, { listId: "team-a" });
    const inB = createArbeitTools(service, { listId: "team-b" });
    const created = await inA.arbeit_task_create!.execute({ title: "Only in A" });
    assert.equal(created.success, true);
    assert.equal((created as any).data.task.list_id, "team-a");
    const listed = (await inB.arbeit_query!.execute({ query: "tasks" })) as any;
    assert.deepEqual(listed.data.tasks, []);
    const listedA = (await inA.arbeit_query!.execute({ query: "tasks" })) as any;
    assert.equal(listedA.data.tasks.length, 1);
    await store.close();
  });

  it("gives each tool set its own session unless one is named", async () => {
    const store = await InMemoryTaskStore.open();
    const one = createArbeitTools(store);
    const two = createArbeitTools(store);
    const task = ((await one.arbeit_task_create!.execute({ title: "Shared" })) as any).data.task.id;
    const other = ((await two.arbeit_task_create!.execute({ title: "Other" })) as any).data.task.id;
    const first = (await one.arbeit_task_start_work!.execute({ task_id: task })) as any;
    const second = (await two.arbeit_task_start_work!.execute({ task_id: other })) as any;
    assert.match(first.data.session_id, /^ai-[a-z0-9]{8}$/);
    assert.match(second.data.session_id, /^ai-[a-z0-9]{8}$/);
    assert.notEqual(first.data.session_id, second.data.session_id);
    // Two sessions, even of one agent name, never share a claim.
    const taken = (await two.arbeit_task_start_work!.execute({ task_id: task })) as any;
    assert.equal(taken.error?.code, "ALREADY_CLAIMED");
    await store.close();
  });
});
