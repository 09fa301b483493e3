/**
 * Collisions on the home view: the edits hosts refused lately because another session reserved
 * the file (edit_refused events), newest first: who was refused which file, whose reservation
 * held it (its task), when, and whether the file is free now. A person sees where two agents
 * reach for the same files, and whom to ask.
 */
import type { HomeView } from "../../contract.js";
import { When } from "../common.js";

type Row = HomeView["collisions"][number];

const who = (agent: string | null, session: string | null) => (
  <>
    {agent ?? "an agent"}{" "}
    {session && (
      <span class="muted small">
        (session <code>{session}</code>)
      </span>
    )}
  </>
);

function Collision({ row }: { row: Row }) {
  return (
    <li data-collision-seq={row.seq} data-path={row.path} data-freed={row.freed ? "true" : "false"}>
      <span class={row.freed ? "badge" : "badge warn"}>{row.freed ? "free now" : "still held"}</span>{" "}
      {who(row.agent, row.session)} was refused <code>{row.path}</code>
      <span class="muted small">
        {" "}
        held by {who(row.holder.agent, row.holder.session)}
        {row.holder.task_id && (
          <>
            {" "}
            for <a href={`/task/${row.holder.task_id}`}>{row.holder.task_id}</a>
          </>
        )}{" "}
        (<code>{row.pattern}</code>), <When at={row.at} />
      </span>
    </li>
  );
}

export function Collisions({ rows }: { rows: HomeView["collisions"] }) {
  const held = rows.filter((row) => !row.freed).length;
  return (
    <section class="panel" aria-labelledby="home-collisions">
      <h2 id="home-collisions">
        Collisions<span class={held > 0 ? "count alert-count" : "count"}>{rows.length}</span>
      </h2>
      {rows.length === 0 ? (
        <p class="muted">No edit was refused this week.</p>
      ) : (
        <ul class="plain-list collisions">
          {rows.map((row) => (
            <Collision key={row.seq} row={row} />
          ))}
        </ul>
      )}
    </section>
  );
}
