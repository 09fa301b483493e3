/**
 * OpenCode's sessions and who started whom. Every session is an Arbeit session of its own, a
 * sub-agent's child session (the `task` tool) included, so two sub-agents can work on two tasks at
 * once. A child's `session.created` event carries `info.parentID`: a child without work of its own
 * records the files it touches against the task of the nearest ancestor that has work.
 */
export class SessionTree {
  readonly #parents = new Map<string, string>();
  readonly #agents = new Map<string, string>();

  created(id: string, parentID: string | undefined): void {
    if (parentID && parentID !== id) this.#parents.set(id, parentID);
  }

  deleted(id: string): void {
    this.#parents.delete(id);
    this.#agents.delete(id);
  }

  /** The agent a session runs as (from chat messages and tool calls), for events the hooks record. */
  agentIs(id: string, agent: string | undefined): void {
    if (agent) this.#agents.set(id, agent);
  }

  agentOf(id: string): string | null {
    return this.#agents.get(id) ?? null;
  }

  /** The sessions `id` was started from, nearest first. */
  ancestors(id: string): string[] {
    const chain: string[] = [];
    const seen = new Set<string>([id]);
    for (let parent = this.#parents.get(id); parent !== undefined; parent = this.#parents.get(parent)) {
      if (seen.has(parent)) break;
      seen.add(parent);
      chain.push(parent);
    }
    return chain;
  }
}

/**
 * Which session a `file.edited` event (which names no session) most likely came from: the only
 * session with a tool call running, else the last session that ran one. Two sessions running
 * tools at once make it ambiguous, and then nothing is guessed. A `task` call (a sub-agent at
 * work) edits nothing itself: the session waiting on it does not count as running a tool, or a
 * sub-agent's edits would always look ambiguous.
 */
const DELEGATING_TOOL = "task";

export class SessionActivity {
  readonly #running = new Map<string, string>();
  #last: string | undefined;

  started(callID: string, session: string, tool?: string): void {
    if (tool === DELEGATING_TOOL) return;
    this.#running.set(callID, session);
    this.#last = session;
  }

  finished(callID: string): void {
    this.#running.delete(callID);
  }

  /** A tool that throws never reaches tool.execute.after; an idle session has nothing running. */
  idle(session: string): void {
    for (const [callID, owner] of this.#running) if (owner === session) this.#running.delete(callID);
  }

  likelySession(): string | undefined {
    const sessions = new Set(this.#running.values());
    if (sessions.size > 1) return undefined;
    const [only] = sessions;
    return only ?? this.#last;
  }
}
