/** Questions for a person: every live blocker entry. An answer supersedes the blocker with user_input. */
import { useState } from "preact/hooks";
import type { InboxView, Me } from "../../contract.js";
import { callTool, getJson } from "../api.js";
import { ErrorAlert, StatusBadge, useAction, When } from "../common.js";
import { useResource } from "../live.js";

type Question = InboxView["questions"][number];

function QuestionCard({
  question,
  editable,
  answered,
}: {
  question: Question;
  editable: boolean;
  answered: () => void;
}) {
  const [answer, setAnswer] = useState("");
  const action = useAction();
  const { entry, task } = question;
  const send = async (event: Event) => {
    event.preventDefault();
    const ok = await action.run(() =>
      callTool("arbeit_context_add", {
        task_id: task.id,
        type: "user_input",
        content: answer,
        supersede_entry_id: entry.id,
      }),
    );
    if (ok) answered();
  };
  return (
    <article
      class="panel question"
      data-entry-id={entry.id}
      data-task-id={task.id}
      aria-label={`Question on ${task.id}`}
    >
      <div class="meta">
        <StatusBadge status={task.status} />
        <a href={`/task/${task.id}`} data-nav-item>
          {task.title}
        </a>
        <code class="muted">{task.id}</code>
        {task.list_id !== "default" && <span class="muted">list {task.list_id}</span>}
      </div>
      <pre class="asked">{entry.content}</pre>
      <div class="meta muted">
        asked by {question.asked_by.agent ?? "unknown"}
        {question.asked_by.session && (
          <>
            {" "}
            (session <code>{question.asked_by.session}</code>)
          </>
        )}
        , <When at={entry.created_at} />
        {question.working.length > 0
          ? ` · the answer reaches ${question.working.join(", ")}`
          : " · no session works on it now; the next one to resume it gets the answer"}
      </div>
      {editable && (
        <form onSubmit={send}>
          <label>
            Answer
            <textarea required value={answer} onInput={(event) => setAnswer(event.currentTarget.value)} rows={3} />
          </label>
          <div class="form-actions">
            <button type="submit" disabled={action.busy || answer.trim() === ""}>
              Send answer
            </button>
          </div>
          <ErrorAlert error={action.error} onDismiss={action.clear} />
        </form>
      )}
    </article>
  );
}

export function InboxPage({ me }: { me: Me | undefined }) {
  const inbox = useResource("inbox", () => getJson<InboxView>("/api/inbox"));
  // Answered here: hidden at once, before the reload confirms the blocker is superseded.
  const [answered, setAnswered] = useState<Set<string>>(new Set());
  const editable = me !== undefined && !me.read_only;
  const questions = (inbox.data?.questions ?? []).filter((q) => !answered.has(q.entry.id));
  return (
    <section data-view="inbox" class="view">
      <div class="toolbar">
        <h1>Inbox</h1>
        <span class="muted">Blockers agents raised: each is a question for a person.</span>
      </div>
      <ErrorAlert error={inbox.error} onReload={inbox.reload} />
      {!inbox.data && !inbox.error && <p class="muted">Loading…</p>}
      {inbox.data && questions.length === 0 && <p class="muted">No open questions.</p>}
      {questions.map((question) => (
        <QuestionCard
          key={question.entry.id}
          question={question}
          editable={editable}
          answered={() => {
            setAnswered((old) => new Set([...old, question.entry.id]));
            void inbox.reload();
          }}
        />
      ))}
    </section>
  );
}
