import { z } from "zod";
import { flagGuess } from "./global-options.js";
import { flagName } from "./tool-commands.js";
import { UsageError } from "./usage-error.js";

/**
 * Friendly subcommands take their flags from the tool's own schema, so the CLI never restates a
 * parameter list: `parent_id` becomes --parent-id, objects take JSON, arrays take repeats (and
 * commas too when the items are ids or names from a fixed set, which never hold a comma).
 */
export type FlagKind = "string" | "number" | "boolean" | "array" | "json" | "any";

export interface FlagSpec {
  key: string;
  flag: string;
  kind: FlagKind;
  nullable: boolean;
  required: boolean;
  /** Numbers only: a whole number, so no decimal point either. */
  integer?: boolean;
  /** Arrays only: a comma separates items (ids and enum values); free text is one item per flag. */
  commas?: boolean;
  values?: string[];
  description?: string;
}

type JsonSchema = {
  type?: string | string[];
  enum?: unknown[];
  anyOf?: JsonSchema[];
  items?: JsonSchema;
  pattern?: string;
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
};

type Kind = Pick<FlagSpec, "kind" | "nullable" | "integer" | "commas" | "values">;

function kindOf(schema: JsonSchema): Kind {
  if (schema.anyOf) {
    const nonNull = schema.anyOf.filter((option) => option.type !== "null");
    // `x | x[]` (a status or a list of statuses): the list form takes both.
    const inner = kindOf(nonNull.find((option) => option.type === "array") ?? nonNull[0] ?? {});
    return { ...inner, nullable: nonNull.length < schema.anyOf.length || inner.nullable };
  }
  const values = schema.enum?.map(String);
  switch (schema.type) {
    case "integer":
      return { kind: "number", nullable: false, integer: true };
    case "number":
      return { kind: "number", nullable: false };
    case "boolean":
      return { kind: "boolean", nullable: false };
    case "array":
      return {
        kind: "array",
        nullable: false,
        commas: Boolean(schema.items?.enum || schema.items?.pattern),
        ...(schema.items?.enum ? { values: schema.items.enum.map(String) } : {}),
      };
    case "object":
      return { kind: "json", nullable: false };
    case undefined:
      // An enum with null among its values (a risk level, or null to clear it) is a nullable choice.
      if (schema.enum?.includes(null)) {
        const choices = schema.enum.filter((value) => value !== null).map(String);
        return { kind: "string", nullable: true, values: choices };
      }
      // No type at all (z.unknown: any JSON value): JSON when it parses, else the text itself.
      return values ? { kind: "string", nullable: false, values } : { kind: "any", nullable: false };
    default:
      return { kind: "string", nullable: false, ...(values ? { values } : {}) };
  }
}

export function flagSpecs(schema: z.ZodType): FlagSpec[] {
  const json = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as JsonSchema;
  const required = new Set(json.required ?? []);
  return Object.entries(json.properties ?? {}).map(([key, property]) => ({
    key,
    flag: flagName(key),
    required: required.has(key),
    ...kindOf(property),
    ...(property.description ? { description: property.description } : {}),
  }));
}

const WHOLE = /^-?[0-9]+$/;
const DECIMAL = /^-?[0-9]+(\.[0-9]+)?$/;

function convert(spec: FlagSpec, raw: string): unknown {
  if (spec.nullable && raw === "null") return null;
  switch (spec.kind) {
    case "number":
      // Plain decimal only (Number() would take 0x3, " 3", 1e3 and +3 too). Anything else goes on
      // as text, so the schema reports it as a tool error; a value out of range likewise.
      return (spec.integer ? WHOLE : DECIMAL).test(raw) ? Number(raw) : raw;
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
    case "any":
      try {
        return JSON.parse(raw);
      } catch {
        return raw;
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
      for (let j = i + 1; j < argv.length; j++) words.push(argv[j]!);
      break;
    }
    if (!token.startsWith("--") && !/^-[A-Za-z]$/.test(token)) {
      words.push(token);
      continue;
    }
    const eq = token.indexOf("=");
    const name = eq === -1 ? token : token.slice(0, eq);
    const spec = byFlag.get(name);
    if (!spec) throw unknownFlag(name, specs);
    let raw: string | undefined = eq === -1 ? undefined : token.slice(eq + 1);
    if (raw === undefined && spec.kind !== "boolean") {
      raw = argv[++i];
      if (raw === undefined) throw new UsageError(`${spec.flag} needs a value.`);
    }
    if (spec.kind === "boolean") args[spec.key] = raw === undefined ? true : convert(spec, raw);
    else if (spec.kind === "array") {
      const items = spec.commas
        ? raw!
            .split(",")
            .map((item) => item.trim())
            .filter((item) => item !== "")
        : [raw!];
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

function unknownFlag(name: string, specs: readonly FlagSpec[]): UsageError {
  const flags = specs.map((spec) => spec.flag);
  return new UsageError(
    `Unknown flag ${name}.${flagGuess(name, flags)}`,
    `Flags here: ${flags.join(", ") || "(none)"}`,
  );
}

const FLAG_COLUMN = 34;

/** The flag list of a command's help: flag and value on the left, notes on the right. */
export function describeFlags(specs: readonly FlagSpec[]): string {
  if (specs.length === 0) return "  (none)";
  const lines = specs.map((spec) => {
    const value =
      spec.kind === "boolean"
        ? ""
        : spec.values
          ? ` <${spec.values.join("|")}>${spec.kind === "array" ? "[,...]" : ""}`
          : spec.kind === "array"
            ? spec.commas
              ? " <a,b,...>"
              : " <text>"
            : spec.kind === "json"
              ? " <json>"
              : spec.kind === "any"
                ? " <json|text>"
                : spec.kind === "number"
                  ? " <n>"
                  : " <text>";
    const notes = [
      spec.required ? "required" : null,
      spec.kind === "array" && !spec.commas ? "repeat for more" : null,
      spec.nullable ? '"null" for none' : null,
      spec.description ?? null,
    ]
      .filter(Boolean)
      .join("; ");
    const left = `  ${spec.flag}${value}`;
    if (notes === "") return left;
    return left.length < FLAG_COLUMN
      ? `${left.padEnd(FLAG_COLUMN)}${notes}`
      : `${left}\n${" ".repeat(FLAG_COLUMN)}${notes}`;
  });
  return lines.join("\n");
}
