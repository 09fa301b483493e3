import type { EditCheck } from "../domain/reservations.js";
import { withoutSecrets } from "../domain/secrets.js";
import type { FileOperation } from "../domain/types.js";
import type { TaskStore } from "../store/task-store.js";
import type { IncludeSection } from "./briefing.js";
import { getTask } from "./briefing.js";
import { type Caller, identify } from "./caller.js";
import { type ClaimInput, claim, sweepExpiredClaims } from "./claims.js";
import { type CommitInput, recordCommit } from "./commits.js";
import { type AddContextInput, addContext } from "./context.js";
import { recordEditRefused } from "./edit-refusals.js";
import { endSession } from "./handoff.js";
import { type RequestKey, runOnce } from "./idempotency.js";
import { type HeartbeatInput, heartbeat } from "./liveness.js";
import { type MemoryInput, memory } from "./memory.js";
import { mutate, type Result, type ServiceDeps, type ServiceOptions } from "./operation.js";
import { addProgress, completeProgress } from "./progress.js";
import type { QueryName } from "./queries.js";
import { changeRelationship, type RelationshipInput } from "./relationships.js";
import { checkEdit } from "./reservations.js";
import { resolveLikeKernel } from "./resolve-path.js";
import { type ResumeInput, resume } from "./resume.js";
import { offerRetrospective, type RetrospectiveTrigger } from "./retrospective.js";
import { recordSessionEvent, type SessionEventType } from "./session-activity.js";
import { type NewsOptions, sessionNews } from "./session-news.js";
import {
  type CreateTaskInput,
  createTask,
  type DeleteTaskInput,
  deleteTask,
  type UpdateTaskInput,
  updateTask,
} from "./tasks.js";
import { recordToolFailure, type ToolFailureInput } from "./tool-failures.js";
import { secretRedacted } from "./warnings.js";
import { liveActiveWork, startWork, stopWork, trackFile } from "./work.js";

/**
 * Every Arbeit operation over one store: transactional, validated, event-logged. Front ends call
 * these through the tool catalogue; library users may call them directly.
 */
export class ArbeitService {
  readonly store: TaskStore;
  readonly projectRoot: string;
  readonly #deps: ServiceDeps;
  #queries: Promise<typeof import("./queries.js")> | undefined;

  constructor(store: TaskStore, options: ServiceOptions) {
    const now = options.now ?? (() => new Date());
    this.store = store;
    this.projectRoot = options.projectRoot;
    this.#deps = {
      store,
      projectRoot: options.projectRoot,
      now: () => now().toISOString(),
      nowDate: now,
      realpath: options.realpath ?? resolveLikeKernel,
    };
  }

  createTask(input: CreateTaskInput, caller: Caller) {
    return this.#clean(input, (clean) => createTask(this.#deps, clean, identify(caller)));
  }
  getTask(input: { task_id: string; include?: IncludeSection[] }) {
    return getTask(this.#deps, input);
  }
  updateTask(input: UpdateTaskInput, caller: Caller) {
    return this.#clean(input, (clean) => updateTask(this.#deps, clean, identify(caller)));
  }
  deleteTask(input: DeleteTaskInput, caller: Caller) {
    return this.#clean(input, (clean) => deleteTask(this.#deps, clean, identify(caller)));
  }
  startWork(input: { task_id: string; expected_version?: number; reserve?: boolean }, caller: Caller) {
    return this.#clean(input, (clean) => startWork(this.#deps, clean, identify(caller)));
  }
  stopWork(input: { task_id: string }, caller: Caller) {
    return this.#clean(input, (clean) => stopWork(this.#deps, clean, identify(caller)));
  }
  trackFile(input: { path: string; operation: FileOperation }, caller: Caller) {
    return this.#clean(input, (clean) => trackFile(this.#deps, clean, identify(caller)));
  }
  addContext(input: AddContextInput, caller: Caller) {
    return this.#clean(input, (clean) => addContext(this.#deps, clean, identify(caller)));
  }
  addProgress(
    input: { task_id: string; items: string[]; completed?: boolean; host_keys?: ReadonlyArray<string | undefined> },
    caller: Caller,
  ) {
    return this.#clean(input, (clean) => addProgress(this.#deps, clean, identify(caller)));
  }
  completeProgress(input: { item_ids: string[] }, caller: Caller) {
    return this.#clean(input, (clean) => completeProgress(this.#deps, clean, identify(caller)));
  }
  relationship(input: RelationshipInput, caller: Caller) {
    return this.#clean(input, (clean) => changeRelationship(this.#deps, clean, identify(caller)));
  }
  /**
   * The queries (and their zod parameter schemas) load on first use: a hook that only writes
   * never needs them. The module is kept, so later calls pay no import.
   */
  async query(input: { query: QueryName; params?: Record<string, unknown> }, caller: Caller) {
    this.#queries ??= import("./queries.js");
    const { runQuery } = await this.#queries;
    return runQuery(this.#deps, input, identify(caller));
  }
  claim(input: ClaimInput, caller: Caller) {
    return this.#clean(input, (clean) => claim(this.#deps, clean, identify(caller)));
  }
  resume(input: ResumeInput, caller: Caller) {
    return resume(this.#deps, input, identify(caller));
  }
  memory(input: MemoryInput, caller: Caller) {
    return this.#clean(input, (clean) => memory(this.#deps, clean, identify(caller)));
  }

  // What hosts see a session do (Claude Code hooks; the OpenCode plugin can call the same).
  /** A git commit made while the session works on a task, recorded on that task once. */
  recordCommit(input: CommitInput, caller: Caller) {
    return this.#clean(input, (clean) => recordCommit(this.#deps, clean, identify(caller)));
  }
  /** A failed tool call, as an `attempt` entry on the task the session works on (rate-limited). */
  recordToolFailure(input: ToolFailureInput, caller: Caller) {
    return this.#clean(input, (clean) => recordToolFailure(this.#deps, clean, identify(caller)));
  }
  /** A prompt, sub-agent or compaction of the session, on the task it works for if any. */
  recordSessionEvent(input: { event_type: SessionEventType; payload: Record<string, unknown> }, caller: Caller) {
    return this.#clean(input, (clean) => recordSessionEvent(this.#deps, clean, identify(caller)));
  }
  /** The session's retrospective for its agent to keep as memory, once per trigger (null: nothing to offer). */
  /**
   * Frees every lease that ran out, recording each as `claim_expired` (what the next claim or
   * resume would do): a long-running process calls it so that a stale claim is told of while
   * nobody calls. Reads first, and writes only when a lease did run out.
   */
  async freeExpiredClaims(caller: Caller): Promise<number> {
    const due = await this.store.read(async (tx) => (await tx.expiredClaims(tx.databaseNow())).length);
    if (due === 0) return 0;
    return mutate(this.#deps, identify(caller), (w) => sweepExpiredClaims(w));
  }
  offerRetrospective(trigger: RetrospectiveTrigger, caller: Caller) {
    return offerRetrospective(this.#deps, trigger, identify(caller));
  }
  /**
   * May the caller edit `paths` now (a host asks before the edit)? `deny` when another live
   * session holds one of them exclusively, `warn` when only shared; one indexed read per path.
   */
  checkEdit(input: { paths: string[] }, caller: Caller) {
    return checkEdit(this.#deps, input, identify(caller));
  }
  /**
   * A host refused the edit `check` denied: recorded as edit_refused, once per session,
   * reservation and path (a retry writes nothing). Answers how many were recorded.
   */
  recordEditRefused(check: EditCheck, caller: Caller): Promise<number> {
    return recordEditRefused(this.#deps, check, identify(caller));
  }
  /** What happened since the session last looked that it should hear; moves its cursor on. */
  sessionNews(caller: Caller, options?: NewsOptions) {
    return sessionNews(this.#deps, identify(caller), options);
  }
  /**
   * A live conversation's heartbeat (src/service/liveness.ts): the session's claims and
   * reservations run `seconds` from now, or lapse now when it `ended`.
   */
  heartbeat(input: HeartbeatInput, caller: Caller) {
    return heartbeat(this.#deps, input, identify(caller));
  }
  /** The session ended: a handoff note on its task; with `stop`, its work stops too. */
  endSession(input: { reason: string; stop: boolean }, caller: Caller) {
    return this.#clean(input, (clean) => endSession(this.#deps, clean, identify(caller)));
  }

  /**
   * Runs `run` (a mutating call) at most once per (session, list, request_id): a repeat returns the first
   * response, stored in the same transaction as the call's writes, and writes nothing.
   */
  once<T>(caller: Caller, key: RequestKey, run: () => Promise<T>): Promise<T> {
    return runOnce(this.#deps, identify(caller), key, run);
  }

  /**
   * Runs `fn` in one write transaction: every operation it calls joins it, so they are written
   * together or, when one throws, not at all (arbeit_batch).
   */
  atomically<T>(fn: () => Promise<T>): Promise<T> {
    return this.#deps.store.write(() => fn());
  }

  /** The task a session is working on, else the one it last worked on (for host briefings). */
  async sessionTask(session: string): Promise<{ task_id: string; active: boolean } | undefined> {
    return this.store.read(async (tx) => {
      // Asked together (one round trip on Postgres): the last worked task is read whether or not it is needed.
      const lastRead = tx.lastWorkedTask(session);
      lastRead.catch(() => {});
      const active = await liveActiveWork(tx, session);
      if (active) return { task_id: active.task_id, active: true };
      const last = await lastRead;
      return last ? { task_id: last, active: false } : undefined;
    });
  }

  /**
   * Runs a write with `input` cleaned of Arbeit's own secrets: whatever a front end passes in
   * (a prompt, a failed command, a title) is stored where every token can read it back. The
   * caller is told in a warning, so that the secret is revoked.
   */
  async #clean<I, R>(input: I, run: (clean: I) => Promise<R>): Promise<R> {
    const { value, redacted } = withoutSecrets(input);
    const result = await run(value);
    const warnings = (result as Partial<Result<unknown>> | undefined)?.warnings;
    if (redacted && Array.isArray(warnings)) warnings.push(secretRedacted());
    return result;
  }

  close(): Promise<void> {
    return this.store.close();
  }
}
