import assert from "node:assert/strict";
import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { before, describe, it } from "node:test";
import type { TestProject } from "../helpers/service.js";
import { useProject } from "./helpers.js";

/**
 * File reservations through the tool catalogue: a session reserves paths or globs with
 * arbeit_task_claim {paths}, exclusively or shared; other sessions are refused (FILE_RESERVED) or
 * warned; hosts ask checkEdit before an edit; the reservation ends with the work, the task, its
 * lease, or a person's forced release, each logged.
 */
const alice = { session: "ses-alice", agent: "alice" };
const bob = { session: "ses-bob", agent: "bob" };
const person = { session: "oncall", agent: "human:oncall" };
let current: () => TestProject;
const callAny = (tool: string, args: unknown, caller?: Record<string, unknown>): Promise<any> =>
  current().call(tool, args, caller);

describe("file reservations", () => {
  const project = useProject();
  before(() => {
    current = project;
  });

  const reserve = (args: Record<string, unknown>, caller = alice) =>
    callAny("arbeit_task_claim", { action: "claim", ...args }, caller);
  const check = (paths: string[], caller: { session: string; agent: string } = bob) =>
    project().service.checkEdit({ paths }, caller);
  const events = async (types: string[]) =>
    (
      (await project().service.query({ query: "events", params: { event_types: types } }, alice)).data as {
        events: Array<{ event_type: string; session_id: string; payload: Record<string, unknown> }>;
      }
    ).events;

  it("an exclusive reservation denies another session's edit, naming holder, task and end, and allows the holder's", async () => {
    const id = (await project().ok("arbeit_task_create", { title: "Auth" }, alice)).task.id;
    await project().ok("arbeit_task_start_work", { task_id: id }, alice);
    const reserved = await project().ok("arbeit_task_claim", { paths: ["src/auth/**"] }, alice);
    assert.equal(reserved.reserved[0].pattern, "src/auth/**");
    assert.equal(reserved.reserved[0].mode, "exclusive");
    assert.equal(reserved.reserved[0].task_id, id, "reserved for the task the session works on");

    const denied = (await check(["src/auth/session.ts"])).data;
    assert.equal(denied.decision, "deny");
    assert.match(
      denied.reason!,
      /src\/auth\/session\.ts is reserved exclusively by alice \(session ses-alice, task tkt-/,
    );
    assert.ok(denied.reason!.includes(`until ${reserved.reserved[0].until}`), denied.reason);
    assert.match(denied.reason!, /Do not edit it/);
    assert.equal(
      (await check([join(project().dir, "src/auth/session.ts")])).data.decision,
      "deny",
      "absolute paths too",
    );
    assert.equal((await check(["src/other.ts"])).data.decision, "allow");
    assert.equal((await check(["src/auth/session.ts"], alice)).data.decision, "allow", "the holder edits freely");
    assert.equal(
      (await project().service.checkEdit({ paths: ["src/auth/a.ts"] }, { ...bob, parents: [alice.session] })).data
        .decision,
      "allow",
      "a sub-agent started from the holder is the holder",
    );
  });

  it("refuses an overlapping reservation in either direction, all or nothing, with FILE_RESERVED", async () => {
    await project().ok("arbeit_task_claim", { paths: ["src/a.ts"] }, alice);
    const wider = await reserve({ paths: ["lib/x.ts", "src/**"] }, bob);
    assert.equal(wider.success, false);
    assert.equal(wider.error!.code, "FILE_RESERVED");
    assert.match(wider.error!.message, /src\/\*\* is reserved by alice/);
    assert.equal(wider.error!.details!.holders[0].session, alice.session);
    assert.equal((await check(["lib/x.ts"], alice)).data.decision, "allow", "lib/x.ts was not reserved either");
    await project().ok("arbeit_task_claim", { paths: ["src/**"] }, alice);
    assert.equal((await reserve({ paths: ["src/deep/b.ts"] }, bob)).error?.code, "FILE_RESERVED");
  });

  it("shared reservations let others edit with a warning, and keep exclusive ones out", async () => {
    await project().ok("arbeit_task_claim", { paths: ["docs/"], shared: true }, alice);
    const warned = (await check(["docs/guide.md"])).data;
    assert.equal(warned.decision, "warn");
    assert.match(warned.reason!, /also reserved \(shared\) by alice/);
    const both = await project().ok("arbeit_task_claim", { paths: ["docs/guide.md"], shared: true }, bob);
    assert.equal(both.shared_with[0].session, alice.session);
    assert.equal(
      (await reserve({ paths: ["docs/guide.md"] }, { session: "ses-carol", agent: "carol" })).error?.code,
      "FILE_RESERVED",
    );
  });

  it("resolves paths like recorded files: relative to the root, through symlinks; outside the project is refused", async () => {
    mkdirSync(join(project().dir, "real"));
    symlinkSync(join(project().dir, "real"), join(project().dir, "link"));
    const reserved = await project().ok("arbeit_task_claim", { paths: ["./link/../link/a.ts"] }, alice);
    assert.equal(reserved.reserved[0].pattern, "real/a.ts");
    assert.equal((await check(["link/a.ts"])).data.decision, "deny");
    const outside = await reserve({ paths: ["../elsewhere.ts"] });
    assert.equal(outside.error?.code, "INVALID_ARGUMENT");
    assert.equal((await check(["/etc/passwd"])).data.decision, "allow", "outside the project is nobody's");
  });

  it("lists who holds what until when, all or those that could match a path", async () => {
    await project().ok("arbeit_task_claim", { paths: ["src/**"] }, alice);
    await project().ok("arbeit_task_claim", { paths: ["docs/a.md"], shared: true }, bob);
    const all = (await project().ok("arbeit_query", { query: "reservations" })).reservations;
    assert.deepEqual(
      all.map((r: any) => [r.pattern, r.mode, r.agent]),
      [
        ["docs/a.md", "shared", "bob"],
        ["src/**", "exclusive", "alice"],
      ],
    );
    const forFile = (await project().ok("arbeit_query", { query: "reservations", params: { path: "src/x/y.ts" } }))
      .reservations;
    assert.deepEqual(
      forFile.map((r: any) => r.pattern),
      ["src/**"],
    );
  });

  it("ends with the holder's work, with the task, by release, and by a person's logged force", async () => {
    const id = (await project().ok("arbeit_task_create", { title: "T", plan: "p" }, alice)).task.id;
    await project().ok("arbeit_task_start_work", { task_id: id }, alice);
    await project().ok("arbeit_task_claim", { paths: ["a.ts"] }, alice);
    await project().ok("arbeit_task_stop_work", { task_id: id }, alice);
    assert.equal((await check(["a.ts"])).data.decision, "allow", "stopping work released it");

    await project().ok("arbeit_task_start_work", { task_id: id }, alice);
    await project().ok("arbeit_task_claim", { paths: ["b.ts"] }, alice);
    await project().ok("arbeit_task_update", { task_id: id, status: "cancelled" }, alice);
    assert.equal((await check(["b.ts"])).data.decision, "allow", "ending the task released it");

    await project().ok("arbeit_task_claim", { paths: ["c.ts"] }, alice);
    const own = await project().ok("arbeit_task_claim", { action: "release", paths: ["c.ts"] }, alice);
    assert.equal(own.released[0].pattern, "c.ts");

    await project().ok("arbeit_task_claim", { paths: ["d.ts"] }, alice);
    const unforced = await project().ok("arbeit_task_claim", { action: "release", paths: ["d.ts"] }, bob);
    assert.deepEqual(unforced.released, [], "nobody else releases it without force");
    assert.equal((await check(["d.ts"])).data.decision, "deny");
    await project().ok("arbeit_task_claim", { action: "release", paths: ["d.ts"], force: true }, person);
    assert.equal((await check(["d.ts"])).data.decision, "allow");

    const released = (await events(["reservation_released"])).map((e) => [e.payload.pattern, e.payload.reason]);
    assert.deepEqual(released, [
      ["a.ts", "work_stopped"],
      ["b.ts", "task_finished"],
      ["c.ts", "released"],
      ["d.ts", "forced"],
    ]);
    const forced = (await events(["reservation_released"])).at(-1)!;
    assert.equal(forced.session_id, person.session);
    assert.equal(forced.payload.session, alice.session, "the log names whose reservation was broken");
  });

  it("runs out on the database clock, and the holder's activity renews it by its own lease length", async () => {
    const id = (await project().ok("arbeit_task_create", { title: "T" }, alice)).task.id;
    await project().ok("arbeit_task_start_work", { task_id: id }, alice);
    await project().ok("arbeit_task_claim", { paths: ["a.ts"], lease_seconds: 60 }, alice);
    project().clock.advance(50_000);
    await project().ok("arbeit_progress_add", { task_id: id, items: ["step"] }, alice);
    project().clock.advance(50_000);
    assert.equal((await check(["a.ts"])).data.decision, "deny", "activity at 50 s ran it 60 s again");
    project().clock.advance(11_000);
    assert.equal((await check(["a.ts"])).data.decision, "allow", "60 s without activity: free");
    await project().ok("arbeit_task_claim", { paths: ["a.ts"] }, bob);
    assert.deepEqual(
      (await events(["reservation_expired"])).map((e) => [e.payload.pattern, e.payload.session]),
      [["a.ts", alice.session]],
    );
  });

  it("start_work is not needed: a session without work reserves for no task", async () => {
    const reserved = await project().ok("arbeit_task_claim", { paths: ["x.ts"] }, alice);
    assert.equal(reserved.reserved[0].task_id, null);
    const bad = await reserve({ paths: ["x.ts"], next: true });
    assert.equal(bad.error?.code, "INVALID_ARGUMENT");
    assert.equal(
      (await callAny("arbeit_task_claim", { task_id: "tkt-aaaaaaaa", shared: true })).error?.code,
      "INVALID_ARGUMENT",
    );
  });
});

describe("fenced claims", () => {
  const project = useProject();
  before(() => {
    current = project;
  });

  it("a claim keeps its own lease length: activity renews a short lease by that length, not the default", async () => {
    const id = (await project().ok("arbeit_task_create", { title: "T" }, alice)).task.id;
    const claimed = await project().ok("arbeit_task_claim", { task_id: id, lease_seconds: 60 }, alice);
    project().clock.advance(30_000);
    await project().ok("arbeit_context_add", { task_id: id, type: "note", content: "x" }, alice);
    const task = (await project().ok("arbeit_task_get", { task_id: id })).task;
    assert.equal(Date.parse(task.lease_expires_at) - Date.parse(claimed.lease_expires_at), 30_000);
    assert.equal(Date.parse(task.lease_expires_at) - project().clock.current.getTime(), 60_000);
  });

  it("renew alone is a heartbeat: every claim and reservation of the session runs its lease again", async () => {
    const id = (await project().ok("arbeit_task_create", { title: "T" }, alice)).task.id;
    await project().ok("arbeit_task_claim", { task_id: id, lease_seconds: 120 }, alice);
    await project().ok("arbeit_task_claim", { paths: ["a.ts"], lease_seconds: 300 }, alice);
    project().clock.advance(100_000);
    const beat = await project().ok("arbeit_task_claim", { action: "renew" }, alice);
    const now = project().clock.current.getTime();
    assert.equal(Date.parse(beat.renewed[0].lease_expires_at) - now, 120_000);
    assert.equal(Date.parse(beat.reservations[0].until) - now, 300_000);
    const again = await project().ok("arbeit_task_claim", { action: "renew", task_id: id }, alice);
    assert.equal(Date.parse(again.lease_expires_at) - now, 120_000, "renewing one claim keeps its length too");
  });

  it("a session whose claim moved is refused on its next write with CLAIM_MOVED naming the new holder, file touches included", async () => {
    const id = (await project().ok("arbeit_task_create", { title: "T" }, alice)).task.id;
    await project().ok("arbeit_task_start_work", { task_id: id }, alice);
    await project().ok("arbeit_task_claim", { task_id: id, lease_seconds: 10 }, alice);
    project().clock.advance(11_000);
    await project().ok("arbeit_task_claim", { task_id: id }, bob);
    for (const [tool, args] of [
      ["arbeit_context_add", { task_id: id, type: "note", content: "still mine?" }],
      ["arbeit_progress_add", { task_id: id, items: ["step"] }],
      ["arbeit_task_update", { task_id: id, status: "completed" }],
      ["arbeit_task_claim", { task_id: id }],
      ["arbeit_task_claim", { task_id: id, paths: ["a.ts"] }],
    ] as const) {
      const refused = await callAny(tool, args, alice);
      assert.equal(refused.error?.code, "CLAIM_MOVED", `${tool}: ${JSON.stringify(refused)}`);
      assert.match(refused.error!.message, /its claim moved to bob \(another session, ses-bob\)/);
    }
    await assert.rejects(
      project().service.trackFile({ path: "src/a.ts", operation: "write" }, alice),
      (error: any) => error.code === "CLAIM_MOVED",
    );
    const files = (await project().ok("arbeit_query", { query: "files_for_task", params: { task_id: id } })).files;
    assert.deepEqual(files, [], "the fenced touch was not recorded");
    const news = (await project().service.sessionNews(alice)).data.news.map((n) => n.text);
    assert.equal(news.filter((text) => /no longer this session's/.test(text)).length, 1, "told once");
    assert.deepEqual((await project().service.sessionNews(alice)).data.news, [], "and only once");
  });
});
