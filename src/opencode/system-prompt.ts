/**
 * The most the session's briefing adds to each of its system prompts, in tokens (o200k_base). A
 * briefing is paid on every model call, so it is kept well under arbeit_resume's default budget;
 * arbeit_task_get has the rest.
 */
export const SYSTEM_BRIEFING_TOKENS = 800;
// Three characters a token, the rate estimateTokens assumes: briefings mix ids (about 2.5
// characters a token) with prose (about 4), and the mix stays under the budget.
const BRIEFING_CHARS = SYSTEM_BRIEFING_TOKENS * 3;
const CUT_NOTE = "(briefing cut to fit the system prompt; arbeit_task_get has all of it)";

/** `text` in at most `max` characters: whole lines while they fit, then a note that it was cut. */
export function fitBriefing(text: string, max: number = BRIEFING_CHARS): string {
  if (text.length <= max) return text;
  const room = max - CUT_NOTE.length - 1;
  const kept: string[] = [];
  let used = 0;
  for (const line of text.split("\n")) {
    if (used + line.length + 1 > room) {
      const left = room - used - 1;
      // A long first line (a task's description) is clipped rather than lost whole.
      if (left > 40) kept.push(`${line.slice(0, left - 1)}…`);
      break;
    }
    kept.push(line);
    used += line.length + 1;
  }
  return [...kept, CUT_NOTE].join("\n");
}

/** Beyond this many items the news line says how many more there were; a person's answers are always told. */
const NEWS_ITEMS = 4;

/** One line for the model: a person's answers first, then what others did to the session's task since its last step. */
export function newsLine(items: ReadonlyArray<{ text: string; answer?: true }>): string | undefined {
  if (items.length === 0) return undefined;
  const answers = items.filter((item) => item.answer).map((item) => item.text);
  const others = items.filter((item) => !item.answer);
  const shown = others.slice(-NEWS_ITEMS).map((item) => item.text);
  const more = others.length - shown.length;
  return `Arbeit news since this session's last step: ${[...answers, ...shown].join(" ")}${more > 0 ? ` (and ${more} earlier)` : ""}`;
}

/**
 * How the system prompts of OpenCode's hidden helper agents begin: the title agent (it names a new
 * session from its first message) and the compaction agent (it writes a compaction's summary).
 * Both run on the session's own id, and the system-prompt hook is given no agent name, only the
 * prompt; these are OpenCode 1.18's own texts.
 */
const HELPER_AGENT_PROMPTS = ["You are a title generator.", "You are a context summarization agent."];

/**
 * True for a model call of OpenCode's title or compaction agent: it gets neither the session's
 * briefing nor its news (the compaction agent gets the briefing as compaction context instead),
 * and reading for it would use up news the session's own next step must be told.
 */
export function isHelperAgentCall(system: readonly string[]): boolean {
  return system.some((text) => HELPER_AGENT_PROMPTS.some((prompt) => text.includes(prompt)));
}

interface Briefed {
  briefing: string;
  /** The last event seq the session has been told about, by its briefing or by news. */
  seq: number;
}

/** What the store says for the next system prompt (the system-prompt step, src/opencode/plugin-steps.ts). */
export type PromptSource = (after: number | undefined) => Promise<{ briefing?: string; seq: number; news?: string }>;

/**
 * What Arbeit adds to an OpenCode session's system prompts (`experimental.chat.system.transform`).
 *
 * OpenCode builds the system prompt afresh for every model call, so a briefing added to one call
 * only would be gone from the next. The session is briefed at its first call (each sub-agent's
 * session at its own) and that same text is repeated on every later call: the model keeps it in
 * view, and an unchanged system prompt keeps the provider's prompt cache valid. It is refreshed only
 * after a compaction, when the conversation starts over from a summary. Between two calls, news of
 * what other sessions did to the session's task is added to the next call only.
 */
export class SystemPrompts {
  readonly #sessions = new Map<string, Promise<Briefed | undefined>>();

  /** The texts for the next model call of `session`, briefing first (a stable prefix), from `source`. */
  async next(session: string, source: PromptSource): Promise<string[]> {
    const previous = this.#sessions.get(session);
    let texts: string[] = [];
    let failure: unknown;
    // One call at a time per session (the title agent's runs beside the first step), so that each
    // piece of news is told once.
    const step = (async (): Promise<Briefed | undefined> => {
      const known = await previous;
      try {
        // The briefing tells the session where things stand, up to `seq`; news is what comes after.
        // The plugin keeps its own place between calls.
        const part = await source(known?.seq);
        const briefing = known?.briefing ?? part.briefing ?? "";
        texts = [briefing, ...(part.news ? [part.news] : [])].filter((text) => text !== "");
        return { briefing, seq: part.seq };
      } catch (error) {
        // A failed call keeps what the session was told: the next one repeats it, or tries again.
        failure = error;
        return known;
      }
    })();
    this.#sessions.set(session, step);
    await step;
    if (failure !== undefined) throw failure;
    return texts;
  }

  /** The session's next call is briefed afresh (after a compaction, or when the session is gone). */
  forget(session: string): void {
    this.#sessions.delete(session);
  }
}
