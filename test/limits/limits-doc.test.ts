import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import type { z } from "zod";
import { JSON_FIELDS, type JsonSchema, jsonSchema, LIMITS_DOC, renderLimitsDoc } from "../../scripts/limits-doc.js";
import { QUERIES } from "../../src/service/queries.js";
import { TOOLS } from "../../src/tools/catalogue.js";

/**
 * The audit behind docs/limits.md: every input of every tool in the catalogue (read at run time,
 * so a new tool is covered the day it is added) and of every named query has a maximum.
 */
function unbounded(path: string, schema: JsonSchema): string[] {
  const name = path.split(".").at(-1)!.replace("[]", "");
  if (schema.anyOf) return schema.anyOf.flatMap((branch) => unbounded(path, branch));
  if (schema.enum || schema.type === "boolean" || schema.type === "null") return [];
  if (name in JSON_FIELDS && (schema.type === "object" || schema.type === undefined)) return [];
  switch (schema.type) {
    case "string":
      // An anchored pattern or a date-time format bounds a string as surely as maxLength.
      return schema.maxLength !== undefined || schema.pattern?.endsWith("$") || schema.format === "date-time"
        ? []
        : [`${path}: string without maxLength`];
    case "array":
      return [
        ...(schema.maxItems === undefined ? [`${path}: array without maxItems`] : []),
        ...unbounded(`${path}[]`, schema.items ?? {}),
      ];
    case "integer":
    case "number":
      return schema.maximum === undefined ? [`${path}: number without maximum`] : [];
    case "object":
      return Object.entries(schema.properties ?? {}).flatMap(([key, prop]) => unbounded(`${path}.${key}`, prop));
    default:
      return [`${path}: unconstrained (${JSON.stringify(schema).slice(0, 80)})`];
  }
}

describe("limits audit", () => {
  it("every tool input is bounded", () => {
    const gaps = TOOLS.flatMap((tool) => unbounded(tool.name, jsonSchema(tool.input)));
    assert.deepEqual(gaps, []);
  });

  it("every arbeit_query parameter is bounded", () => {
    const gaps = Object.entries(QUERIES).flatMap(([name, def]) => unbounded(name, jsonSchema(def.params as z.ZodType)));
    assert.deepEqual(gaps, []);
  });

  it("docs/limits.md is current (regenerate: node --import tsx scripts/limits-doc.ts)", () => {
    assert.equal(readFileSync(LIMITS_DOC, "utf8"), renderLimitsDoc());
  });
});
