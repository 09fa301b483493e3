import { beatIntervalMs, MAX_HEARTBEAT_SECONDS } from "../domain/claims.js";
import { ArbeitError } from "../domain/errors.js";
import type { HeartbeatInput, HeartbeatResult } from "../service/liveness.js";
import { row } from "./step-input.js";
import type { HostStep, StepRunner, StepSession } from "./steps.js";

/**
 * One beat of a live conversation's session (src/service/liveness.ts), run where the store is:
 * in this process, or as one request to the service. A read-only token holds no claims: nothing to keep.
 */
export const heartbeatStep: HostStep<HeartbeatInput, HeartbeatResult> = {
  name: "heartbeat",
  read(input) {
    const value = row(input);
    const { seconds, ended } = value;
    if (typeof seconds !== "number" || !Number.isSafeInteger(seconds) || seconds < 1 || seconds > MAX_HEARTBEAT_SECONDS)
      throw new ArbeitError(
        "INVALID_ARGUMENT",
        `The hook's input.seconds must be a whole number from 1 to ${MAX_HEARTBEAT_SECONDS}.`,
        { details: { field: "input.seconds" } },
      );
    if (ended !== undefined && typeof ended !== "boolean")
      throw new ArbeitError("INVALID_ARGUMENT", "The hook's input.ended must be true or false.", {
        details: { field: "input.ended" },
      });
    return { seconds, ended: ended === true };
  },
  readOnly: { answer: { claims: 0, reservations: 0 } },
  async run(service, input, caller) {
    if (!caller.session) return { claims: 0, reservations: 0 };
    return (await service.heartbeat(input, caller)).data;
  },
};

/**
 * The heartbeat of the process that lives as long as its conversation (`arbeit mcp`, the OpenCode
 * plugin): every session it acts for is kept alive by a beat every third of `seconds`, until the
 * process ends (`end()`: the sessions' claims lapse at once) or dies (the beats stop: they lapse
 * within `seconds`). The timer never keeps the process alive by itself. A beat that fails (no
 * store yet, the service out of reach) is reported and tried again at the next one.
 */
export class Heartbeat {
  readonly #sessions = new Map<string, StepSession>();
  #timer: ReturnType<typeof setInterval> | undefined;
  #beating: Promise<void> = Promise.resolve();
  #ended = false;

  /** `seconds`: 0 for none. `steps`: where the beats run (undefined while the project has no store). */
  constructor(
    private readonly seconds: number,
    private readonly steps: () => Promise<StepRunner | undefined>,
    private readonly report: (error: unknown) => void = () => {},
  ) {}

  /**
   * The conversation acts as `who.session`: keep it alive from now on. `now`: beat at once (after
   * a call that may have taken a claim, whose own lease may be far longer than the heartbeat's).
   */
  keep(who: StepSession, now = false): void {
    if (this.seconds === 0 || this.#ended || !who.session) return;
    this.#sessions.set(who.session, who);
    if (!this.#timer) {
      this.#timer = setInterval(() => void this.beat(), beatIntervalMs(this.seconds));
      this.#timer.unref?.();
    }
    if (now) void this.beat([who]);
  }

  /** The session was deleted: no more beats for it (its claims lapse within the heartbeat). */
  forget(session: string): void {
    this.#sessions.delete(session);
  }

  /** Beats for `sessions` (every kept one by default), after any beat still under way. */
  beat(sessions: readonly StepSession[] = [...this.#sessions.values()], ended = false): Promise<void> {
    const next = this.#beating.then(async () => {
      if (sessions.length === 0) return;
      try {
        const run = await this.steps();
        if (!run) return;
        for (const who of sessions) await run(heartbeatStep, { seconds: this.seconds, ended }, who);
      } catch (error) {
        this.report(error);
      }
    });
    this.#beating = next;
    return next;
  }

  /** The conversation ended in order: no more beats, and its sessions' claims lapse now. */
  async end(): Promise<void> {
    if (this.#ended) return;
    this.#ended = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    await this.beat([...this.#sessions.values()], true);
  }
}
