import { projectRelative } from "../domain/paths.js";
import { FILE_OPERATIONS, type FileOperation } from "../domain/types.js";
import type { ArbeitService } from "../service/arbeit-service.js";
import type { Caller } from "../service/caller.js";
import { resolveLikeKernel } from "../service/resolve-path.js";
import type { TrackResult } from "../service/work.js";
import { list, oneOf, relativePath, row } from "./step-input.js";
import type { ServiceTarget } from "./target.js";

/**
 * A host's hooks (Claude Code's, the OpenCode plugin's, `arbeit track`) are each split in two: a
 * local part that reads what only the host's machine has (the hook's payload, files and their
 * paths made relative to the local project root, the git commit from the local repository, which
 * sub-agent is at work), and a step that works on the store with what the local part found. On a
 * local store the step runs in the same process; in a checkout that uses `arbeit serve`, the step
 * is sent to the service as one request (POST /api/hook) and runs there, as the token's caller:
 * the same code either way.
 */

/**
 * Who a step acts for: the host's session (none: the agent's own), the sessions it was started
 * from, and on a local store the agent's name if the host knows it (on a service the agent is
 * always the token's).
 */
export interface StepSession {
  session: string | null;
  parents?: readonly string[];
  agent?: string | null;
}

/** A read-only token's step only reads: "read-only"; otherwise "read-write". */
export type Access = "read-write" | "read-only";

export interface HostStep<I, O> {
  /** Its name on the wire (POST /api/hook's `hook`) and in the service's request log. */
  name: string;
  /** Checks input that came over the network; INVALID_ARGUMENT when it is not the step's. */
  read(input: unknown): I;
  run(service: ArbeitService, input: I, caller: Caller, access: Access): Promise<O>;
  /**
   * What a read-only token gets. "reads": the step runs with access "read-only" and writes
   * nothing. `{answer}`: the step only writes, so it is not run and this is the answer (a hook
   * stays silent). Absent: the call is refused with FORBIDDEN.
   */
  readOnly?: "reads" | { answer: O };
  /**
   * What the service's request log says of an answer that is not a plain `ok` (an edit refused:
   * `edit_refused`); undefined for `ok`.
   */
  outcome?(output: O): string | undefined;
}

// biome-ignore lint/suspicious/noExplicitAny: a registry holds steps of every input and output.
export type AnyStep = HostStep<any, any>;

/** Runs a step for `who`: on the open store, or as one request to the service. */
export type StepRunner = <I, O>(step: HostStep<I, O>, input: I, who: StepSession) => Promise<O>;

/** Steps run on this process's own store, as `base` (the host's agent name, unless a step names one, and default list). */
export function localRunner(
  service: () => Promise<ArbeitService>,
  base: Pick<Caller, "agent" | "list_id">,
): StepRunner {
  return async (step, input, who) =>
    step.run(
      await service(),
      input,
      {
        ...base,
        ...(who.agent ? { agent: who.agent } : {}),
        session: who.session,
        ...(who.parents?.length ? { parents: who.parents } : {}),
      },
      "read-write",
    );
}

/**
 * Steps sent to the service at `target`, each as one request; the service's refusal or failure
 * is thrown as the ArbeitError it answered. The agent is the token's; the host's default `list`
 * goes with each step, as a local step runs in it.
 */
export function remoteRunner(
  target: ServiceTarget,
  env: NodeJS.ProcessEnv = process.env,
  list?: string | undefined,
): StepRunner {
  // Loaded with the first remote step: the PreToolUse hook's quick path imports this module (for
  // localRelative) and must not load the network client, the outbox and node:crypto with it.
  return async (step, input, who) =>
    (await import("./hook-delivery.js")).runRemoteStep(target, env, list, step, input, who);
}

/**
 * `path` (absolute, as the host named it) relative to the local project root `root` (a real
 * path), after following its symlinks as the kernel would; undefined when it lies outside. A
 * relative path is what leaves the machine: the service's checkout may sit anywhere.
 */
export function localRelative(root: string, path: string): string | undefined {
  const resolved = resolveLikeKernel(path);
  return (resolved !== null && projectRelative(root, resolved)) || undefined;
}

/** A file a host's tool read or wrote, relative to the project root. */
export interface RelativeTouch {
  path: string;
  operation: FileOperation;
}

/** The most files one step records: far more than one tool call touches. */
const MAX_TOUCHES = 1_000;

type TrackFiles = HostStep<{ touches: RelativeTouch[] }, { results: TrackResult[] }>;

/** Records files the session read or wrote on its active task. */
const trackFiles: Pick<TrackFiles, "read" | "run"> = {
  read(input) {
    const value = row(input);
    return {
      touches: list(value, "touches", MAX_TOUCHES, (entry, field) => {
        const touch = row(entry, field);
        return { path: relativePath(touch, "path"), operation: oneOf(touch, "operation", FILE_OPERATIONS) };
      }),
    };
  },
  async run(service, input, caller) {
    const results: TrackResult[] = [];
    for (const touch of input.touches) results.push((await service.trackFile(touch, caller)).data);
    return { results };
  },
};

/** For a host's hooks (OpenCode's file tools): a read-only token's records nothing, silently. */
export const trackFilesStep: TrackFiles = { name: "track-files", ...trackFiles, readOnly: { answer: { results: [] } } };

/** For `arbeit track`, which a person runs: a read-only token is refused (FORBIDDEN). */
export const trackCommandStep: TrackFiles = { name: "track", ...trackFiles };
