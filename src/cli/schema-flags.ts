import { z } from "zod";
import { UsageError } from "./usage-error.js";

/**
 * Friendly subcommands take their flags from the tool's own schema, so the CLI never restates a
 * parameter list: `parent_id` becomes --parent-id, arrays take commas or repeats, objects JSON.
 */
export type FlagKind = "string" | "number" | "boolean" | "array" | "json";

export interface FlagSpec {
  key: string;
  flag: string;
  kind: FlagKind;
  nullable: boolean;
  required: boolean;
  values?: string[];
  description?: string;
}

type JsonSchema = {
  type?: string | string[];
  enum?: unknown[];
  anyOf?: JsonSchema[];
  items?: JsonSchema;
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
};

function kindOf(schema: JsonSchema): { kind: FlagKind; nullable: boolean; values?: string[] } {
  if (schema.anyOf) {
    const nonNull = schema.anyOf.filter((option) => option.type !== "null");
    const inner = kindOf(nonNull[0] ?? {});
    return { ...inner, nullable: nonNull.length < schema.anyOf.length || inner.nullable };
  }
  const values = schema.enum?.map(String);
  switch (schema.type) {
    case "integer":
    case "number":
      return { kind: "number", nullable: false };
    case "boolean":
      return { kind: "boolean", nullable: false };
    case "array":
      return {
        kind: "array",
        nullable: false,
        ...(schema.items?.enum ? { values: schema.items.enum.map(String) } : {}),
      };
    case "object":
      return { kind: "json", nullable: false };
    default:
      return { kind: "string", nullable: false, ...(values ? { values } : {}) };
  }
}

export function flagSpecs(schema: z.ZodType): FlagSpec[] {
  const json = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as JsonSchema;
  const required = new Set(json.required ?? []);
  return Object.entries(json.properties ?? {}).map(([key, property]) => ({
    key,
    flag: `--${key.replaceAll("_", "-")}`,
    required: required.has(key),
    ...kindOf(property),
    ...(property.description ? { description: property.description } : {}),
  }));
}

function convert(spec: FlagSpec, raw: string): unknown {
  if (spec.nullable && raw === "null") return null;
  switch (spec.kind) {
    case "number": {
      const value = Number(raw);
      // Not a number: pass the text on so the schema reports it as a tool error.
      return raw.trim() !== "" && Number.isFinite(value) ? value : raw;
    }
    case "boolean":
      if (raw === "true") return true;
      if (raw === "false") return false;
      throw new UsageError(`${spec.flag} takes true or false, not ${JSON.stringify(raw)}.`);
    case "json":
      try {
        return JSON.parse(raw);
      } catch {
        throw new UsageError(
          `${spec.flag} needs JSON, e.g. ${spec.flag} '{"key": "value"}'; could not parse ${JSON.stringify(raw)}.`,
        );
      }
    default:
      return raw;
  }
}

/** Parses `argv` into tool arguments: flags by the specs, bare words into `positionals` in order. */
export function parseFlags(
  argv: readonly string[],
  specs: readonly FlagSpec[],
  positionals: readonly string[],
  variadic?: string,
): Record<string, unknown> {
  const byFlag = new Map<string, FlagSpec>();
  for (const spec of specs) {
    byFlag.set(spec.flag, spec);
    byFlag.set(`--${spec.key}`, spec);
  }
  const args: Record<string, unknown> = {};
  const words: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!;
    if (token === "--") {
      words.push(...argv.slice(i + 1));
      break;
    }
    if (!token.startsWith("--")) {
      words.push(token);
      continue;
    }
    const eq = token.indexOf("=");
    const name = eq === -1 ? token : token.slice(0, eq);
    const spec = byFlag.get(name);
    if (!spec) {
      throw new UsageError(`Unknown flag ${name}.`, `Known flags: ${specs.map((s) => s.flag).join(", ") || "(none)"}`);
    }
    let raw: string | undefined = eq === -1 ? undefined : token.slice(eq + 1);
    if (raw === undefined && spec.kind !== "boolean") {
      raw = argv[++i];
      if (raw === undefined) throw new UsageError(`${spec.flag} needs a value.`);
    }
    if (spec.kind === "boolean") args[spec.key] = raw === undefined ? true : convert(spec, raw);
    else if (spec.kind === "array") {
      const items = raw!
        .split(",")
        .map((item) => item.trim())
        .filter((item) => item !== "");
      args[spec.key] = [...((args[spec.key] as string[] | undefined) ?? []), ...items];
    } else args[spec.key] = convert(spec, raw!);
  }
  const specByKey = new Map(specs.map((spec) => [spec.key, spec]));
  positionals.forEach((key, index) => {
    const word = words[index];
    if (word === undefined) return;
    if (key in args) throw new UsageError(`${key} was given both as a word and as ${specByKey.get(key)?.flag}.`);
    const spec = specByKey.get(key);
    args[key] = spec ? convert(spec, word) : word;
  });
  const extra = words.slice(positionals.length);
  if (extra.length > 0) {
    if (!variadic) throw new UsageError(`Unexpected argument ${JSON.stringify(extra[0])}.`);
    args[variadic] = [...((args[variadic] as string[] | undefined) ?? []), ...extra];
  }
  return args;
}

export function describeFlags(specs: readonly FlagSpec[]): string {
  const lines = specs.map((spec) => {
    const value =
      spec.kind === "boolean"
        ? ""
        : spec.values
          ? ` <${spec.values.join("|")}>`
          : spec.kind === "array"
            ? " <a,b,...>"
            : spec.kind === "json"
              ? " <json>"
              : spec.kind === "number"
                ? " <n>"
                : " <text>";
    const notes = [
      spec.required ? "required" : null,
      spec.nullable ? "null clears" : null,
      spec.description ?? null,
    ].filter(Boolean);
    return `  ${(spec.flag + value).padEnd(44)} ${notes.join("; ")}`;
  });
  return lines.join("\n");
}
