import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { it } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { LIMITS } from "../../src/schemas/limits.js";
import { ChildTransport } from "../helpers/child-transport.js";
import { CLI } from "../helpers/cli.js";
import { forEachEngine, type HostileProject } from "./engines.js";

/**
 * Arguments nested thousands of levels deep, in any tool and through every way in, are refused
 * with FIELD_TOO_LARGE before anything recursive reads them: never a stack overflow reported as
 * INTERNAL_ERROR, and nothing written.
 */

/** `levels` arrays inside each other around a 1, as JSON text (JSON.stringify itself overflows on these). */
const nested = (levels: number) => `${"[".repeat(levels)}1${"]".repeat(levels)}`;

/** A JSON object of a fixed shape around `levels` of nesting, e.g. {"value": [[[1]]]}. */
const around = (template: string, levels: number) => template.replace("DEEP", nested(levels));

const DEEP = 5_000;

async function titles(project: HostileProject): Promise<string[]> {
  const data = await project.ok("arbeit_query", { query: "tasks" });
  return data.tasks.map((task: { title: string }) => task.title);
}

function assertTooDeep(envelope: any, field: string) {
  assert.equal(envelope?.success, false, JSON.stringify(envelope)?.slice(0, 500));
  assert.equal(envelope.error.code, "FIELD_TOO_LARGE", envelope.error.message);
  assert.match(
    envelope.error.message,
    new RegExp(
      `^Invalid arguments — ${field}: is nested too deeply \\(a call's arguments nest at most ${LIMITS.input_depth} levels`,
    ),
  );
  assert.deepEqual(
    envelope.error.details.issues.map((issue: { path: string }) => issue.path),
    [field],
  );
}

const BATCH = `{"operations": [{"tool": "arbeit_task_create", "args": {"title": "deep", "description": "x", "extra": DEEP}}]}`;

forEachEngine("arguments nested thousands of levels deep", (project) => {
  it("arbeit call, arbeit batch <file> and arbeit batch - refuse a deep batch with FIELD_TOO_LARGE and write nothing", async () => {
    const p = await project();
    const text = around(BATCH, DEEP);
    const file = join(p.dir, "deep.json");
    writeFileSync(file, text);
    for (const [args, input] of [
      [["call", "arbeit_batch", text], undefined],
      [["call", "arbeit_batch", "-"], text],
      [["batch", file], undefined],
      [["batch", "-"], text],
    ] as const) {
      const result = await p.cli([...args], { input });
      assert.equal(result.code, 1, `${args.join(" ").slice(0, 40)}: ${result.stderr}`);
      assertTooDeep(result.json, "operations");
    }
    assert.deepEqual(await titles(p), []);
  });

  it("every tool refuses deep arguments the same way: memory values, metadata, query params, unknown fields", async () => {
    const p = await project();
    const task = (await p.ok("arbeit_task_create", { title: "target" })).task.id;
    const cases: Array<[string, string, string]> = [
      ["arbeit_memory", `{"action": "set", "key": "k", "value": DEEP}`, "value"],
      [
        "arbeit_context_add",
        `{"task_id": "${task}", "type": "note", "content": "c", "metadata": {"a": DEEP}}`,
        "metadata",
      ],
      [
        "arbeit_relationship",
        `{"action": "add", "from_task_id": "${task}", "to_task_id": "${task}", "type": "relates_to", "metadata": {"a": DEEP}}`,
        "metadata",
      ],
      ["arbeit_task_create", `{"title": "t", "unknown": DEEP}`, "unknown"],
      ["arbeit_query", `{"query": "tasks", "params": {"status": DEEP}}`, "params"],
    ];
    for (const [tool, template, field] of cases) {
      const result = await p.cli(["call", tool, "-"], { input: around(template, 100_000) });
      assert.equal(result.code, 1, `${tool}: ${result.stderr}`);
      assertTooDeep(result.json, field);
    }
    // The friendly commands go through the same check.
    const flag = await p.cli([
      "context",
      "add",
      task,
      "note",
      "c",
      "--metadata",
      around(`{"a": DEEP}`, DEEP),
      "--json",
    ]);
    assertTooDeep(flag.json, "metadata");
    assert.deepEqual(await titles(p), ["target"]);
    assert.equal((await p.ok("arbeit_memory", { action: "list" })).entries.length, 0);
  });

  it("nesting up to the limit still reaches the schema: a batch with metadata 32 levels deep runs", async () => {
    const p = await project();
    const metadata = JSON.parse(around(`{"a": DEEP}`, LIMITS.json_depth - 1));
    const data = await p.ok("arbeit_batch", {
      operations: [
        { tool: "arbeit_task_create", args: { title: "holder" }, ref: "t" },
        { tool: "arbeit_context_add", args: { task_id: "$t", type: "note", content: "deep enough", metadata } },
      ],
    });
    assert.deepEqual(data.results[1].data.entry.metadata, metadata);
  });

  it("a Claude Code hook still records a failed call whose input nests thousands of levels deep", async () => {
    const p = await project();
    const task = (await p.ok("arbeit_task_create", { title: "hooked" })).task.id;
    await p.ok("arbeit_task_start_work", { task_id: task }, { session: "ses-deep-hook" });
    const payload = `{"session_id": "ses-deep-hook", "hook_event_name": "PostToolUseFailure", "cwd": ${JSON.stringify(p.dir)}, "tool_name": "Odd", "tool_input": ${around(`{"x": DEEP}`, 20_000)}, "error": "boom"}`;
    const result = await p.cli(["hook", "post-tool-use-failure"], { input: payload });
    assert.equal(result.code, 0);
    assert.doesNotMatch(result.stderr, /skipped|Maximum call stack/, result.stderr);
    const { context } = await p.ok("arbeit_task_get", { task_id: task, include: ["context"] });
    assert.deepEqual(
      context.map((entry: { type: string; content: string }) => [entry.type, entry.content]),
      [["attempt", `Odd failed: (an input nested over ${LIMITS.input_depth} levels deep)\nOutcome: boom`]],
    );
  });

  it("the MCP server answers a deep batch from the real SDK client with FIELD_TOO_LARGE, and keeps serving", async () => {
    const { dir, env } = await project();
    const child = spawn(process.execPath, [CLI, "mcp"], { cwd: dir, env: { ...process.env, ...env }, stdio: "pipe" });
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
    const transport = new ChildTransport(child);
    const client = new Client({ name: "deep-client", version: "1.0.0" });
    await client.connect(transport);

    // As deep as the client's own JSON.stringify manages, which is deep enough to overflow a recursion.
    const args = JSON.parse(around(BATCH, 3_000));
    const result = await client.callTool({ name: "arbeit_batch", arguments: args });
    assert.equal(result.isError, true);
    assertTooDeep(result.structuredContent, "operations");

    // Far deeper, written as a raw line: the server parses it and answers the same way.
    await transport.raw(
      `{"jsonrpc": "2.0", "id": "deep", "method": "tools/call", "params": {"name": "arbeit_memory", "arguments": ${around(`{"action": "set", "key": "k", "value": DEEP}`, 200_000)}}}\n`,
    );
    for (let i = 0; i < 600 && !transport.seen.some((message: any) => message.id === "deep"); i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const answer = transport.seen.find((message: any) => message.id === "deep") as any;
    assert.ok(answer, "the server answered the raw line");
    assertTooDeep(answer.result.structuredContent, "value");

    const listed = await client.callTool({ name: "arbeit_query", arguments: { query: "tasks" } });
    assert.deepEqual((listed.structuredContent as any).data.tasks, []);
    await client.close();
    assert.equal(await exited, 0);
  });
});
