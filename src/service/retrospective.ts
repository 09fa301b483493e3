import { estimateTokens } from "../domain/token-budget.js";
import type { ArbeitEvent, EventType } from "../domain/types.js";
import type { StoreTx } from "../store/task-store.js";
import type { Caller } from "./caller.js";
import { mutate, ok, type Result, type ServiceDeps } from "./operation.js";

/**
 * A session's retrospective, offered to its agent to keep as memory: what the session decided,
 * tried and failed at, was blocked on (with the person's answer) and completed, quoted from its
 * own records (context entries and task changes it wrote). Arbeit composes the offer; it writes
 * no memory itself: the agent keeps what it judges worth keeping with arbeit_memory, in its own
 * words. Each trigger (a compaction; the end of a run, offered when the session is resumed)
 * offers it at most once per session, and only when the session recorded something: the offer
 * is recorded as a `retrospective_offered` event of the session.
 */

export const RETROSPECTIVE_TRIGGERS = ["compaction", "session_end"] as const;
export type RetrospectiveTrigger = (typeof RETROSPECTIVE_TRIGGERS)[number];

/** What the offer may cost the model, in the resume packet's estimate; the newest items are kept. */
export const RETROSPECTIVE_TOKENS = 600;
/** The session's newest events read for it. */
const EVENTS_READ = 200;
const QUOTE_CHARS = 300;
const MATERIAL: readonly EventType[] = ["context_added", "task_updated"];
/** The context entries a retrospective quotes, and the word each is introduced by. */
const QUOTED = { decision: "decided", attempt: "tried", outcome: "found", blocker: "was blocked" } as const;

const quote = (text: string) => {
  const flat = text.replace(/\s+/g, " ").trim();
  return JSON.stringify(flat.length <= QUOTE_CHARS ? flat : `${flat.slice(0, QUOTE_CHARS - 1)}…`);
};

const LEADS: Record<RetrospectiveTrigger, string> = {
  compaction: "Arbeit: the conversation was compacted. What this session recorded before, in its own words:",
  session_end: "Arbeit: this session's last run ended. What it recorded, in its own words:",
};

/** The call that keeps a lesson, and that the offer is made once. */
const ASK =
  'Keep what a later session should know, in your own words: arbeit_memory {"action": "set", "key": "<topic>", "value": "<lesson>"} ' +
  '(add "scope": "task", "scope_id": "<task id>" for one task\'s lesson; {"action": "similar"} finds entries that say the same, ' +
  '{"action": "merge", "keys": [...], "key": "<kept>"} folds them). Nothing is kept unless you set it; this is offered once.';

/** Whether the event is one a retrospective quotes. */
function isMaterial(event: ArbeitEvent): boolean {
  if (event.event_type === "task_updated")
    return (event.payload.changes as { status?: { to?: unknown } } | undefined)?.status?.to === "completed";
  return event.event_type === "context_added" && Object.hasOwn(QUOTED, event.payload.type as string);
}

/** The line quoting a material event (see isMaterial). */
async function lineOf(tx: StoreTx, event: ArbeitEvent, titles: Map<string, Promise<string>>): Promise<string> {
  const task = event.task_id ?? "";
  if (event.event_type === "task_updated") {
    if (!titles.has(task))
      titles.set(
        task,
        tx.getTask(task).then((found) => found?.title ?? ""),
      );
    return `- completed ${task} ${quote(await titles.get(task)!)}`;
  }
  const type = event.payload.type as keyof typeof QUOTED;
  const line = `- ${QUOTED[type]} (${task}): ${quote(String(event.payload.content ?? ""))}`;
  if (type !== "blocker") return line;
  // A person answers a question by superseding it with a user_input entry.
  const answeredBy = (await tx.getContext(event.entity_id))?.superseded_by;
  const answer = answeredBy ? await tx.getContext(answeredBy) : undefined;
  return answer?.type === "user_input" ? `${line}; answered: ${quote(answer.content)}` : line;
}

/**
 * The retrospective `trigger` offers the caller's session now, as text for its agent; null when
 * it was offered already, the session recorded nothing worth it, or the caller has no session.
 */
export async function offerRetrospective(
  deps: ServiceDeps,
  trigger: RetrospectiveTrigger,
  caller: Caller,
): Promise<Result<{ text: string | null }>> {
  if (!caller.session) return ok({ text: null });
  const session = caller.session;
  // Composed in one read, so that a hook with nothing to offer (the common case) writes nothing;
  // the lookups it needs (titles, answers) go out together.
  const lines = await deps.store.read(async (tx) => {
    // Both go out at once; the offers are read apart, so a long session's records never hide one.
    const offersRead = tx.sessionEvents(session, ["retrospective_offered"], RETROSPECTIVE_TRIGGERS.length * 10);
    const eventsRead = tx.sessionEvents(session, MATERIAL, EVENTS_READ);
    const [offers, events] = await Promise.all([offersRead, eventsRead]);
    if (offers.some((e) => e.payload.trigger === trigger)) return [];
    const titles = new Map<string, Promise<string>>();
    return Promise.all(events.filter(isMaterial).map((event) => lineOf(tx, event, titles)));
  });
  // Newest first: when the budget runs out, the oldest are what is left out.
  const kept: string[] = [];
  for (const line of lines) {
    if (estimateTokens([LEADS[trigger], line, ...kept, ASK].join("\n")) > RETROSPECTIVE_TOKENS) break;
    kept.push(line);
  }
  if (kept.length === 0) return ok({ text: null });
  // Two SessionStart hooks of one session for one trigger do not run at once, so the read above
  // decides for the write.
  await mutate(deps, caller, (w) =>
    w.emit({
      event_type: "retrospective_offered",
      entity_type: "session",
      entity_id: session,
      task_id: null,
      payload: { trigger, items: kept.length },
    }),
  );
  return ok({ text: [LEADS[trigger], ...kept.reverse(), ASK].join("\n") });
}
