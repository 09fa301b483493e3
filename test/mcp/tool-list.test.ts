import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { TEMPLATE_NAMES } from "../../src/domain/templates.js";
import { toolInputJsonSchema } from "../../src/mcp/tool-json-schema.js";
import { TOOLS } from "../../src/tools/catalogue.js";
import { serverInTempProject } from "./mcp-client.js";

describe("arbeit mcp: tool list", () => {
  const server = serverInTempProject();

  it("lists every catalogue tool with its title, description, annotations and JSON Schema", async () => {
    const { tools } = await server.mcp.client.listTools();
    assert.deepEqual(
      tools.map((tool) => tool.name),
      TOOLS.map((tool) => tool.name),
    );
    for (const def of TOOLS) {
      const listed = tools.find((tool) => tool.name === def.name)!;
      assert.equal(listed.title, def.title);
      assert.equal(listed.description, def.description);
      // Spec defaults left out (src/mcp/annotations.ts); read with them, they are the tool's own.
      const defaults = { readOnlyHint: false, destructiveHint: true, idempotentHint: false };
      const read = { ...defaults, ...listed.annotations };
      assert.equal(read.readOnlyHint, def.annotations.readOnlyHint, `${def.name} readOnlyHint`);
      if (!def.annotations.readOnlyHint) {
        assert.equal(read.destructiveHint, def.annotations.destructiveHint, `${def.name} destructiveHint`);
        assert.equal(listed.annotations?.destructiveHint, def.annotations.destructiveHint, "always explicit");
        assert.equal(read.idempotentHint, def.annotations.idempotentHint, `${def.name} idempotentHint`);
      }
      assert.equal("execution" in listed, false);
      assert.deepEqual(listed.inputSchema, toolInputJsonSchema(def), `${def.name} schema`);
    }
  });

  it("marks destructive every tool one call of which can remove data, and only those", async () => {
    const { tools } = await server.mcp.client.listTools();
    const removes = (tool: (typeof tools)[number]): boolean => {
      const properties = (tool.inputSchema as any).properties ?? {};
      const actions: string[] = properties.action?.enum ?? [];
      if (
        tool.name.endsWith("_delete") ||
        actions.some((action) => ["delete", "remove", "gc", "merge"].includes(action))
      ) {
        return true;
      }
      // A batch runs other tools' operations: it removes data when one of them can.
      const batched: string[] = properties.operations?.items?.properties?.tool?.enum ?? [];
      return batched.some((name) => removes(tools.find((other) => other.name === name)!));
    };
    const destructive = tools.filter((tool) => !tool.annotations?.readOnlyHint && tool.annotations?.destructiveHint);
    assert.deepEqual(
      destructive.map((tool) => tool.name),
      tools.filter(removes).map((tool) => tool.name),
    );
    assert.ok(destructive.some((tool) => tool.name === "arbeit_memory"));
    assert.ok(destructive.some((tool) => tool.name === "arbeit_relationship"));
  });

  it("shows enums and limits in the schemas clients see", async () => {
    const { tools } = await server.mcp.client.listTools();
    const create = tools.find((tool) => tool.name === "arbeit_task_create")!.inputSchema as any;
    assert.deepEqual(create.required, ["title"]);
    assert.deepEqual(create.properties.status.enum, ["open", "in_progress", "completed", "cancelled"]);
    assert.equal(create.properties.title.maxLength, 500);
    assert.equal(create.$schema, undefined);
  });

  it("leaves out bounds no well-formed call comes near: non-empty strings and the lengths of names", async () => {
    const { tools } = await server.mcp.client.listTools();
    const listed = JSON.stringify(tools.map((tool) => tool.inputSchema));
    assert.doesNotMatch(listed, /"minLength":1\b/);
    assert.doesNotMatch(listed, /"maxLength":(128|200)\b/);
    const create = tools.find((tool) => tool.name === "arbeit_task_create")!.inputSchema as any;
    assert.equal(create.properties.description.maxLength, 32_768, "text a long plan can reach keeps its limit");
    assert.equal(create.properties.parent_id.pattern, "^tkt-[a-z0-9]{8}$", "ids keep their form");
  });

  it("leaves out what the rest of a schema already says: an enum's type, a closed object, a list as long as its enum", async () => {
    const { tools } = await server.mcp.client.listTools();
    const schema = (name: string) => tools.find((tool) => tool.name === name)!.inputSchema as any;
    const create = schema("arbeit_task_create");
    assert.deepEqual(create.properties.status, { enum: ["open", "in_progress", "completed", "cancelled"] });
    assert.deepEqual(create.properties.type, { enum: ["epic", "feature", "bug", "investigation", "chore", null] });
    assert.equal(create.properties.title.type, "string", "a field without an enum keeps its type");
    assert.equal(schema("arbeit_task_get").properties.include.maxItems, undefined);
    assert.equal(create.properties.blocked_by.maxItems, 100, "a list of ids keeps its limit");
    assert.doesNotMatch(JSON.stringify(tools.map((tool) => tool.inputSchema)), /"additionalProperties":false/);
    for (const tool of tools) assert.equal((tool.inputSchema as any).additionalProperties, undefined, tool.name);
    assert.deepEqual(create.properties.metadata.additionalProperties, {}, "an open object still says so");
    // Unknown keys are refused all the same, with the envelope's code.
    const sent = await server.mcp.client.callTool({
      name: "arbeit_task_create",
      arguments: { title: "x", colour: "red" },
    });
    assert.equal(sent.isError, true);
    assert.equal((sent.structuredContent as any).error.code, "INVALID_ARGUMENT");
    assert.match((sent.structuredContent as any).error.message, /colour/);
  });

  it("says what each template is for, in the schema of every tool that takes one", async () => {
    const { tools } = await server.mcp.client.listTools();
    const withTemplate = tools.filter((tool) => (tool.inputSchema as any).properties?.template);
    assert.ok(withTemplate.length > 0);
    for (const tool of withTemplate) {
      const template = (tool.inputSchema as any).properties.template;
      assert.deepEqual(template.enum, [...TEMPLATE_NAMES], tool.name);
      for (const name of TEMPLATE_NAMES)
        assert.match(template.description, new RegExp(`\\b${name}: [a-z]`), `${tool.name}: ${name}`);
    }
  });
});
