import assert from "node:assert/strict";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { LEGACY_LAST, listPostgresMigrations, migrationKind } from "../../src/store/postgres/migrate.js";
import { tempDir } from "../helpers/temp.js";

/**
 * The rules of docs/contributing.md for migrations, as far as a machine can hold them: every
 * Postgres migration after LEGACY_LAST says on its first line whether it is an expand or a
 * contract, and an expand holds none of the statements that take away or tighten what an older
 * release reads or writes. Whether an expand really keeps the previous release working is proved
 * by test/migrations/previous-release.test.ts, with that release's own code.
 */
const LATER = listPostgresMigrations().filter((migration) => migration.version > LEGACY_LAST);

/** Statements an expand may not hold: each removes, renames or tightens something older code uses. */
const NOT_IN_AN_EXPAND: Array<[RegExp, string]> = [
  [/\bDROP\s+(TABLE|COLUMN|VIEW|FUNCTION|TRIGGER|TYPE|INDEX)\b/i, "drops what older code may use"],
  [/\bALTER\s+TABLE\s+[^;]*\bDROP\s+(?!NOT\s+NULL)/i, "drops part of a table"],
  [/\bRENAME\b/i, "renames what older code names"],
  [/\bALTER\s+COLUMN\s+\S+\s+(SET\s+DATA\s+)?TYPE\b/i, "changes a column's type"],
  [/\bSET\s+NOT\s+NULL\b/i, "makes older code's inserts without the column fail"],
  [
    /\bADD\s+(COLUMN\s+)?(?:IF\s+NOT\s+EXISTS\s+)?\S+\s+[^,;]*\bNOT\s+NULL\b(?![^,;]*\bDEFAULT\b)/i,
    "adds a NOT NULL column without a default",
  ],
  [/\bADD\s+CONSTRAINT\b/i, "adds a constraint older code's writes may break"],
  [/\bCREATE\s+UNIQUE\s+INDEX\b/i, "adds a uniqueness older code's writes may break"],
];

/**
 * The tables the store's statements read whole (`SELECT *`, `alias.*`). A long-running process
 * (arbeit serve, arbeit mcp, arbeit ui, the OpenCode plugin) prepares such a statement once per
 * connection; a column added to the table makes Postgres refuse it there ("cached plan must not
 * change result type"). This release runs the transaction again on a fresh connection; the
 * previous release (whose store code reads the same tables whole) does not, and would fail until
 * restarted. So an expand adds no column to these tables: a table of its own, keyed by the row's
 * id, carries what it adds.
 */
function tablesReadWhole(): Set<string> {
  const tables = new Set<string>();
  const root = fileURLToPath(new URL("../../src/store/", import.meta.url));
  for (const file of readdirSync(root, { recursive: true, encoding: "utf8" })) {
    if (!file.endsWith(".ts")) continue;
    const source = readFileSync(join(root, file), "utf8");
    for (const [, table] of source.matchAll(/\bSELECT\s+\*\s+FROM\s+(\w+)/gi)) tables.add(table!);
    // The alias is defined in the same statement, after the columns it names.
    for (const star of source.matchAll(/\b(\w+)\.\*/g)) {
      const statement = source.slice(star.index, star.index + 600);
      const named = new RegExp(`\\b(?:FROM|JOIN)\\s+(\\w+)\\s+(?:AS\\s+)?${star[1]}\\b`, "i").exec(statement);
      if (named) tables.add(named[1]!);
    }
  }
  return tables;
}
const READ_WHOLE = tablesReadWhole();

/** Why `sql`, said to be an expand, is not one (empty when it holds none of the above). */
function expandProblems(sql: string): string[] {
  const code = sql.replace(/--[^\n]*/g, "");
  const problems = NOT_IN_AN_EXPAND.filter(([pattern]) => pattern.test(code)).map(([, why]) => why);
  for (const [, table] of code.matchAll(/\bALTER\s+TABLE\s+(?:IF\s+EXISTS\s+)?(?:ONLY\s+)?"?(\w+)"?\s+ADD\b/gi))
    if (READ_WHOLE.has(table!.toLowerCase()))
      problems.push(`adds a column to ${table}, which the previous release reads whole (SELECT *)`);
  return problems;
}

describe("migration kinds", () => {
  for (const migration of LATER) {
    it(`${migration.name} says its kind, and an expand only adds`, () => {
      const { kind } = migrationKind(migration);
      if (kind === "expand")
        assert.deepEqual(
          expandProblems(readFileSync(migration.path, "utf8")),
          [],
          "mark it a contract (docs/contributing.md#migrations), or take the statement out",
        );
    });
  }

  it("a later migration that does not say its kind is refused before anything is applied", () => {
    const { dir, cleanup } = tempDir();
    try {
      const path = join(dir, "0099_unsaid.sql");
      writeFileSync(path, "CREATE TABLE x (id TEXT);\n");
      assert.throws(() => migrationKind({ version: 99, name: "0099_unsaid.sql", path }), /does not say its kind/);
      writeFileSync(path, "-- contract (oldest compatible: 120): says a version above its own\n");
      assert.throws(() => migrationKind({ version: 99, name: "0099_unsaid.sql", path }), /above its own version/);
      writeFileSync(path, "-- contract (oldest compatible: 98): drops what releases before 98 read\n");
      assert.deepEqual(migrationKind({ version: 99, name: "0099_unsaid.sql", path }), {
        kind: "contract",
        oldestCompatible: 98,
      });
    } finally {
      cleanup();
    }
  });

  it("knows the tables the store reads whole", () => {
    for (const table of ["context_entries", "events", "memory", "progress_items"])
      assert.ok(READ_WHOLE.has(table), table);
    assert.equal(READ_WHOLE.has("tasks"), false, "tasks are read column by column");
  });

  it("the expand check catches what would break an older release", () => {
    assert.deepEqual(
      expandProblems("CREATE TABLE later (id TEXT PRIMARY KEY);\nALTER TABLE tasks ADD COLUMN x TEXT DEFAULT 'a';"),
      [],
    );
    assert.deepEqual(expandProblems("ALTER TABLE tasks ADD COLUMN x TEXT NOT NULL DEFAULT 'a';"), []);
    assert.deepEqual(expandProblems("ALTER TABLE tasks ALTER COLUMN risk DROP NOT NULL;"), []);
    for (const sql of [
      "ALTER TABLE tasks DROP COLUMN risk;",
      "DROP TABLE memory;",
      "DROP INDEX idx_tasks_owner;",
      "ALTER TABLE tasks ALTER COLUMN status DROP DEFAULT;",
      "ALTER TABLE tasks RENAME COLUMN title TO name;",
      "ALTER TABLE tasks ALTER COLUMN priority TYPE BIGINT;",
      "ALTER TABLE tasks ALTER COLUMN intent SET NOT NULL;",
      "ALTER TABLE tasks ADD COLUMN owner_team TEXT NOT NULL;",
      "ALTER TABLE tasks ADD CONSTRAINT short_title CHECK (length(title) < 10);",
      "CREATE UNIQUE INDEX one_title ON tasks (title);",
      "ALTER TABLE context_entries ADD COLUMN later_note TEXT;",
    ])
      assert.notDeepEqual(expandProblems(sql), [], sql);
  });
});
