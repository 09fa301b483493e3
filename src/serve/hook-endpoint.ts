import { CLAUDE_STEPS } from "../claude/hook-steps.js";
import { ArbeitError } from "../domain/errors.js";
import { OPENCODE_STEPS } from "../opencode/plugin-steps.js";
import type { HookRequest } from "../remote/client.js";
import { cutOffStep } from "../remote/cut-off-step.js";
import { heartbeatStep } from "../remote/heartbeat.js";
import { type AnyStep, trackCommandStep, trackFilesStep } from "../remote/steps.js";
import { LIMITS } from "../schemas/limits.js";
import { identify } from "../service/caller.js";
import { tokenCaller } from "../team/token-rules.js";
import { type Envelope, failure } from "../tools/envelope.js";
import { hashArgs } from "../tools/idempotency.js";
import { type CallContext, defaultList, guardedCall, parentSessions } from "./calls.js";
import { Refusal } from "./http.js";
import type { Bearer } from "./token-gate.js";

/**
 * POST /api/hook: one step of a host's hook (Claude Code's hooks, the OpenCode plugin's, `arbeit
 * track`), run on the service's store as the token's caller: the same step the host runs on a
 * local store (src/remote/steps.ts). The body is `{"hook": "<step>", "session": "<id>",
 * "parents": ["<id>", ...], "list": "<default list>", "input": {...}, "id": "<id>"}`; the answer is an envelope whose data is the step's.
 * A step sent with an `id` runs at most once per id (and session): a client that got no answer
 * sends it again, from its outbox, under the same id, and is answered what the first run answered.
 */
const STEPS = new Map<string, AnyStep>(
  [...CLAUDE_STEPS, trackFilesStep, trackCommandStep, heartbeatStep, ...OPENCODE_STEPS, cutOffStep].map((s) => [
    s.name,
    s,
  ]),
);

/** Whether `name` is a hook step this service runs. */
export const isHookStep = (name: string): boolean => STEPS.has(name);

type ReadHook = HookRequest & { parents: string[]; list: string | undefined };

export function hookRequest(body: unknown): ReadHook {
  const value = body as Record<string, unknown> | null;
  const shape = 'The body is {"hook": "<name>", "session": "<id>", "parents": ["<id>"], "input": {...}}.';
  if (value === null || typeof value !== "object" || Array.isArray(value) || typeof value.hook !== "string")
    throw new Refusal(400, "INVALID_ARGUMENT", shape);
  const extra = Object.keys(value).find((key) => !["hook", "session", "parents", "list", "input", "id"].includes(key));
  if (extra !== undefined) throw new Refusal(400, "INVALID_ARGUMENT", `${shape} Not "${extra}".`);
  if (value.session !== undefined && typeof value.session !== "string")
    throw new Refusal(400, "INVALID_ARGUMENT", "session must be a string.");
  const parents = parentSessions(value.parents);
  const list = defaultList(value.list);
  if (value.id !== undefined && (typeof value.id !== "string" || value.id === "" || value.id.length > LIMITS.name))
    throw new Refusal(400, "INVALID_ARGUMENT", `id must be a string of 1 to ${LIMITS.name} characters.`);
  if (!STEPS.has(value.hook))
    throw new Refusal(400, "INVALID_ARGUMENT", `There is no hook step named ${JSON.stringify(value.hook)}.`);
  return {
    hook: value.hook,
    session: value.session as string | undefined,
    parents,
    list,
    input: value.input ?? {},
    id: value.id as string | undefined,
  };
}

/** What the request log says of a step's answer beyond `ok` (HostStep.outcome), if anything. */
export function hookOutcome(hook: string, data: unknown): string | undefined {
  return STEPS.get(hook)?.outcome?.(data);
}

/** Runs the step for `bearer`'s token: its session rules, its read-only rule, then the step. */
export function runHookStep(context: CallContext, bearer: Bearer, request: ReadHook): Promise<Envelope> {
  const { token } = bearer;
  const step = STEPS.get(request.hook) as AnyStep;
  return guardedCall(context, bearer, [request.session, ...request.parents], async (service) => {
    try {
      const input = step.read(request.input);
      const caller = identify({
        ...tokenCaller(token, request.session),
        ...(request.parents.length > 0 ? { parents: request.parents } : {}),
        ...(request.list !== undefined ? { list_id: request.list } : {}),
      });
      // A hook payload without a session acts as the agent's own session, as locally; the step sees none.
      const asSent = { ...caller, session: request.session ?? null };
      if (token.read_only) {
        if (step.readOnly === undefined)
          return failure(
            new ArbeitError("FORBIDDEN", `This token is read-only; the ${step.name} step writes.`, {
              details: { hook: step.name },
            }),
          );
        if (step.readOnly !== "reads") return { success: true, data: step.readOnly.answer };
        return { success: true, data: await step.run(service, input, asSent, "read-only") };
      }
      if (request.id === undefined)
        return { success: true, data: await step.run(service, input, asSent, "read-write") };
      const key = {
        tool: `hook:${step.name}`,
        request_id: request.id,
        args_hash: await hashArgs(`hook:${step.name}`, request.input ?? {}),
      };
      return await service.once(asSent, key, async () => ({
        success: true as const,
        data: await step.run(service, input, asSent, "read-write"),
      }));
    } catch (error) {
      return failure(error);
    }
  });
}
