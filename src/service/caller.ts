/**
 * Who is calling: the session (OpenCode sessionID, Claude Code session_id, the MCP connection or
 * --session) and the agent. The list scopes reads and is the default for creates.
 */
export interface Caller {
  session: string | null;
  agent: string | null;
  list_id?: string;
}

export const ANONYMOUS: Caller = { session: null, agent: null };
