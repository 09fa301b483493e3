import { withArticle } from "../domain/article.js";
import { holdsSecret, withoutSecrets } from "../domain/secrets.js";
import type { SqlDb, SqlStore } from "../store/sql/database.js";
import type { StoreTx, TaskStore } from "../store/task-store.js";
import { engineOf } from "./engine.js";
import type { Progress } from "./export.js";
import { exportTables, tableRows } from "./export-format.js";
import { type Finding, historyFindings } from "./history-check.js";
import { RowRules, type RuleProblem } from "./row-rules.js";

/**
 * `arbeit doctor`: checks a store for what should never happen (corruption, broken keys, rows
 * that disagree with their event history or break the rules the tools keep) and for what can
 * linger (claims whose lease ran out). Relationships left to soft-deleted tasks are history, not
 * damage: reported for information, never a failure. `fix` repairs only the lingering kind and
 * tidies that history, each change recorded as the event the service would have written.
 */
export interface CheckResult {
  name: string;
  ok: boolean;
  /** At most MAX_FINDINGS; `total` says how many there were. */
  findings: Finding[];
  total: number;
  /** Set when --fix repaired this check's findings. */
  fixed?: number;
}

export interface DoctorReport {
  ok: boolean;
  checks: CheckResult[];
}

export interface DoctorOptions {
  fix?: boolean;
  now?: () => Date;
  /** Told after each check; a large store takes seconds, and a terminal shows how far it got. */
  onProgress?: Progress;
}

/** Who repairs are recorded as. */
export const DOCTOR_AGENT = "arbeit-doctor";
const MAX_FINDINGS = 200;

interface Check {
  name: string;
  /** Its findings are for information: expected history, never a failure. */
  informational?: boolean;
  find(db: SqlDb, now: string): Promise<Finding[]>;
  /** Repairs what `find` reported, inside one write transaction; returns how many. */
  fix?(db: SqlDb, tx: StoreTx, now: string): Promise<number>;
}

interface LinkRow {
  id: string;
  from_task_id: string;
  to_task_id: string;
  type: string;
  created_at: string;
  from_missing: unknown;
  to_missing: unknown;
  from_deleted_at: string | null;
  to_deleted_at: string | null;
  to_live: unknown;
}

/** A live relationship with an end that is deleted or missing, and what that says about it. */
interface DeadEndLink extends LinkRow {
  /** Why it is damage, or undefined when it is history a soft delete leaves. */
  damage: string | undefined;
  /** The deleted end (history), with when it was deleted. */
  gone: { task: string; at: string } | undefined;
}

async function deadEndLinks(db: SqlDb): Promise<DeadEndLink[]> {
  const rows = (await db.all(
    `SELECT r.id, r.from_task_id, r.to_task_id, r.type, r.created_at,
         f.id IS NULL AS from_missing, t.id IS NULL AS to_missing,
         f.deleted_at AS from_deleted_at, t.deleted_at AS to_deleted_at,
         t.id IS NOT NULL AND t.deleted_at IS NULL AS to_live
       FROM relationships r LEFT JOIN tasks f ON f.id = r.from_task_id LEFT JOIN tasks t ON t.id = r.to_task_id
       WHERE r.removed_at IS NULL AND (f.id IS NULL OR t.id IS NULL OR f.deleted_at IS NOT NULL OR t.deleted_at IS NOT NULL)
       ORDER BY r.rowid`,
  )) as unknown as LinkRow[];
  return rows.map((row) => {
    const ends = [
      { task: row.from_task_id, missing: Boolean(row.from_missing), deletedAt: row.from_deleted_at },
      { task: row.to_task_id, missing: Boolean(row.to_missing), deletedAt: row.to_deleted_at },
    ];
    let damage: string | undefined;
    for (const end of ends) {
      if (end.missing) damage ??= `points at ${end.task}, which is no task at all`;
      // No tool links a deleted task: a link newer than the deletion was written some other way.
      else if (end.deletedAt !== null && row.created_at > end.deletedAt) {
        damage ??= `was made at ${row.created_at}, after ${end.task} was deleted (${end.deletedAt})`;
      }
    }
    const deleted = ends.find((end) => end.deletedAt !== null);
    return { ...row, damage, gone: deleted ? { task: deleted.task, at: deleted.deletedAt! } : undefined };
  });
}

const describeLink = (row: LinkRow) => `relationship ${row.id} (${row.from_task_id} ${row.type} ${row.to_task_id})`;

/** Links a soft delete left in place: history, which --fix may tidy away as arbeit_relationship remove would. */
async function historyLinks(db: SqlDb): Promise<DeadEndLink[]> {
  return (await deadEndLinks(db)).filter((row) => row.damage === undefined);
}

async function expiredClaims(db: SqlDb, now: string) {
  return (await db.all(
    `SELECT id, owner, lease_expires_at FROM tasks
     WHERE deleted_at IS NULL AND owner IS NOT NULL AND lease_expires_at IS NOT NULL AND lease_expires_at <= ?
     ORDER BY lease_expires_at, id`,
    now,
  )) as Array<{ id: string; owner: string; lease_expires_at: string }>;
}

/** A lease must name its session and agent, and a session must have a lease: anything else holds nothing. */
async function brokenLeases(db: SqlDb) {
  return (await db.all(
    `SELECT id, owner, claim_session, lease_expires_at FROM tasks
     WHERE deleted_at IS NULL
       AND ((lease_expires_at IS NOT NULL AND (owner IS NULL OR claim_session IS NULL))
         OR (claim_session IS NOT NULL AND lease_expires_at IS NULL))
     ORDER BY id`,
  )) as Array<{ id: string; owner: string | null; claim_session: string | null; lease_expires_at: string | null }>;
}

/** Where one of Arbeit's secrets belongs: the key a webhook signs with. Anywhere else it was pasted. */
const SECRET_COLUMNS = new Set(["webhooks.secret"]);

/**
 * Rows holding one of Arbeit's secrets in their text: stored by a version that did not keep them
 * out, or written behind the tools' back. Every token can read them; the finding names the row,
 * never the secret.
 */
async function storedSecrets(db: SqlDb): Promise<Finding[]> {
  const findings: Finding[] = [];
  for (const table of await exportTables(db)) {
    for await (const { row } of tableRows(db, table)) {
      for (const [column, value] of Object.entries(row)) {
        if (typeof value !== "string" || SECRET_COLUMNS.has(`${table.name}.${column}`) || !holdsSecret(value)) continue;
        const id = String(row.id ?? row.seq ?? row.key ?? "?");
        findings.push({
          message: `${table.name} row ${id}: its ${column} holds an Arbeit secret (an arb_ token, a whsec_ webhook secret or an arbui_ dashboard token), readable by every token; revoke that token (arbeit token revoke), replace that webhook or restart that arbeit ui`,
          table: table.name,
          column,
          id,
        });
      }
    }
  }
  return findings;
}

const CHECKS: Check[] = [
  {
    name: "integrity",
    find: async (db) => (await engineOf(db).integrityProblems(db)).map((message) => ({ message })),
  },
  {
    name: "foreign_keys",
    find: async (db) =>
      (await engineOf(db).foreignKeyProblems(db)).map((row) => ({
        message: `${row.table} row ${row.rowid} points at ${withArticle(row.parent)} row that does not exist`,
        table: row.table,
        rowid: row.rowid,
        parent: row.parent,
      })),
  },
  {
    name: "orphan_relationships",
    find: async (db) =>
      (await deadEndLinks(db))
        .filter((row) => row.damage !== undefined)
        .map((row) => ({ message: `${describeLink(row)} ${row.damage}`, relationship_id: row.id })),
  },
  {
    name: "relationships_to_deleted",
    informational: true,
    find: async (db) =>
      (await historyLinks(db)).map((row) => ({
        message: `${describeLink(row)} links ${row.gone!.task}, deleted at ${row.gone!.at}: kept as history`,
        relationship_id: row.id,
      })),
    async fix(db, tx, now) {
      const rows = await historyLinks(db);
      for (const row of rows) {
        await tx.removeRelationship(row.id, now);
        // As arbeit_relationship remove does: the live task whose parent_id/blocked_by it was moves on.
        const touches = (row.type === "parent_of" || row.type === "blocks") && Boolean(row.to_live);
        if (touches) await tx.touchTask(row.to_task_id, now);
        await tx.appendEvent({
          event_type: "relationship_removed",
          entity_type: "relationship",
          entity_id: row.id,
          task_id: touches ? row.to_task_id : row.from_task_id,
          payload: { from_task_id: row.from_task_id, to_task_id: row.to_task_id, type: row.type, reason: "orphan" },
          session_id: null,
          agent: DOCTOR_AGENT,
          timestamp: now,
        });
      }
      return rows.length;
    },
  },
  {
    name: "expired_claims",
    find: async (db, now) =>
      (await expiredClaims(db, now)).map((row) => ({
        message: `task ${row.id} is still owned by ${row.owner}, whose lease ran out at ${row.lease_expires_at}`,
        task_id: row.id,
        owner: row.owner,
        lease_expires_at: row.lease_expires_at,
      })),
    async fix(db, tx, now) {
      const rows = await expiredClaims(db, now);
      for (const row of rows) {
        await tx.clearClaim(row.id, now);
        await tx.appendEvent({
          event_type: "claim_expired",
          entity_type: "task",
          entity_id: row.id,
          task_id: row.id,
          payload: { owner: row.owner, lease_expires_at: row.lease_expires_at },
          session_id: null,
          agent: DOCTOR_AGENT,
          timestamp: now,
        });
      }
      return rows.length;
    },
  },
  {
    name: "broken_leases",
    find: async (db) =>
      (await brokenLeases(db)).map((row) => ({
        message: `task ${row.id} has a lease that names no ${row.owner === null ? "owner" : "session"} (owner ${row.owner}, session ${row.claim_session}, until ${row.lease_expires_at})`,
        task_id: row.id,
        owner: row.owner,
        claim_session: row.claim_session,
        lease_expires_at: row.lease_expires_at,
      })),
    async fix(db, tx) {
      // The lease goes, the owner stays as an assignment: no claim was ever held by it.
      const rows = await brokenLeases(db);
      for (const row of rows) await tx.dropLease(row.id);
      return rows.length;
    },
  },
  { name: "history", find: (db) => historyFindings(db) },
  { name: "rules", find: (db) => ruleFindings(db) },
  { name: "stored_secrets", find: (db) => storedSecrets(db) },
];

export const CHECK_NAMES = CHECKS.map((check) => check.name);
/** The checks whose findings inform and never fail (`ok` stays true). */
export const INFORMATIONAL_CHECKS = CHECKS.filter((check) => check.informational).map((check) => check.name);

/** Every row of every table held to the rules the tools and `arbeit import` hold rows to. */
export async function ruleFindings(db: SqlDb): Promise<Finding[]> {
  const rules = new RowRules();
  const findings: Finding[] = [];
  const finding = (problem: RuleProblem): Finding => ({
    message: problem.key === undefined ? problem.message : `${problem.table} row ${problem.key}: ${problem.message}`,
    table: problem.table,
    ...(problem.column !== undefined ? { column: problem.column } : {}),
    ...(problem.key !== undefined ? { id: problem.key } : {}),
  });
  let read = 0;
  for (const table of await exportTables(db)) {
    for await (const { row } of tableRows(db, table)) {
      const problem = rules.check(table.name, row, ++read);
      if (problem) findings.push(finding(problem));
    }
  }
  for (const problem of rules.finish()) findings.push(finding(problem));
  return findings;
}

/** A check that cannot even run (a corrupt page under its query) is itself a finding. */
async function findSafely(check: Check, db: SqlDb, now: string): Promise<Finding[]> {
  try {
    return await check.find(db, now);
  } catch (error) {
    return [{ message: `the check could not run: ${error instanceof Error ? error.message : String(error)}` }];
  }
}

/** A store the doctor can examine: the service's contract plus raw access for its checks. */
export type MaintainedStore = TaskStore & SqlStore;

async function inspect(store: MaintainedStore, now: string, onProgress?: Progress): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  onProgress?.(0, CHECKS.length);
  try {
    await store.transaction("read", async (db) => {
      for (const check of CHECKS) {
        const findings = await findSafely(check, db, now);
        onProgress?.(results.length + 1, CHECKS.length);
        results.push({
          name: check.name,
          ok: check.informational === true || findings.length === 0,
          // A finding may quote a row's text (history, rules), and the report is shown and kept.
          findings: withoutSecrets(findings.slice(0, MAX_FINDINGS)).value,
          total: findings.length,
        });
      }
    });
  } catch (error) {
    // On a corrupt file SQLite abandons the read transaction, and ending it fails with the same
    // error: what the checks found stands; a failure before any check ran is itself a finding.
    if (results.length < CHECKS.length) {
      const message = `the database could not be read: ${error instanceof Error ? error.message : String(error)}`;
      return CHECKS.map((check, i) => results[i] ?? { name: check.name, ok: false, findings: [{ message }], total: 1 });
    }
  }
  return results;
}

export async function runDoctor(store: MaintainedStore, options: DoctorOptions = {}): Promise<DoctorReport> {
  const now = () => (options.now?.() ?? new Date()).toISOString();
  let checks = await inspect(store, now(), options.onProgress);
  if (options.fix && checks.some((check) => check.total > 0 && CHECKS.find((c) => c.name === check.name)?.fix)) {
    const at = now();
    const fixed = await store.write((tx) =>
      store.transaction("write", async (db) => {
        const counts = new Map<string, number>();
        for (const check of CHECKS) if (check.fix) counts.set(check.name, await check.fix(db, tx, at));
        return counts;
      }),
    );
    checks = (await inspect(store, at, options.onProgress)).map((check) => {
      const count = fixed.get(check.name);
      return count ? { ...check, fixed: count } : check;
    });
  }
  return { ok: checks.every((check) => check.ok), checks };
}
