import type { MetadataScalar } from "../task-store.js";
import type { SqlValue } from "./database.js";
import type { Dialect } from "./dialect.js";

/**
 * Conditions on task `t` for a metadata filter: each key must hold its value, of the same JSON
 * type, either as the value itself or as an item of a list at that key (labels: ["ui", "bug"]
 * matches labels = "ui"). Only the top level of metadata and the items of a list there count.
 * Postgres asks jsonb containment of either shape; SQLite walks the key and its list with json_each.
 */
export function metadataConditions(
  d: Dialect,
  metadata: Readonly<Record<string, MetadataScalar>> | undefined,
): { where: string[]; params: SqlValue[] } {
  const where: string[] = [];
  const params: SqlValue[] = [];
  for (const [key, value] of Object.entries(metadata ?? {})) {
    if (d.name === "postgres") {
      where.push("(t.metadata::jsonb @> ?::jsonb OR t.metadata::jsonb @> ?::jsonb)");
      params.push(JSON.stringify({ [key]: value }), JSON.stringify({ [key]: [value] }));
      continue;
    }
    where.push(sqliteHas(value));
    // The value is compared twice (the key's own, a list item), except a boolean, matched by type.
    params.push(key, ...(typeof value === "boolean" ? [] : [value, value]));
  }
  return { where, params };
}

/** SQLite: json_each's type and value of an item that equals `value` (one parameter, none for a boolean). */
function sameScalar(alias: string, value: MetadataScalar): string {
  if (typeof value === "boolean") return `${alias}.type = '${value}'`;
  if (typeof value === "number") return `${alias}.type IN ('integer', 'real') AND ${alias}.value = ?`;
  return `${alias}.type = 'text' AND ${alias}.value = ?`;
}

function sqliteHas(value: MetadataScalar): string {
  // json_each of a non-list would read it as JSON text, so a key that holds no list walks [].
  return `EXISTS (SELECT 1 FROM json_each(t.metadata) j WHERE j.key = ? AND ((${sameScalar("j", value)})
    OR EXISTS (SELECT 1 FROM json_each(CASE WHEN j.type = 'array' THEN j.value ELSE '[]' END) i
      WHERE ${sameScalar("i", value)})))`;
}
