/**
 * The browser's own notifications, with the person's permission: a question an agent files while
 * the dashboard is open shows up as a notification. Only the tab that holds the live stream
 * notifies, so several open tabs give one notification, not one each.
 */
import { useState } from "preact/hooks";
import type { InboxView } from "../contract.js";
import { leadsStream } from "./live.js";

const seen = new Set<string>();
let primed = false;

const supported = () => typeof Notification !== "undefined";

/** Called with every inbox the page loads: notifies of the questions it did not hold before. */
export function notifyNewQuestions(inbox: InboxView | undefined): void {
  if (!inbox) return;
  const fresh = inbox.questions.filter((question) => !seen.has(question.entry.id));
  for (const question of fresh) seen.add(question.entry.id);
  // Questions already open when the page loaded are on the page: they are no news.
  if (!primed) {
    primed = true;
    return;
  }
  if (!supported() || Notification.permission !== "granted" || !leadsStream()) return;
  for (const { entry, task } of fresh) {
    // The tag makes a second notice of the same question (another dashboard) replace the first.
    const note = new Notification(`Question on ${task.title}`, { body: entry.content, tag: entry.id });
    note.onclick = () => {
      window.focus();
      location.assign("/inbox");
    };
  }
}

/** Asks the browser for permission to notify; shows where that stands. */
export function NotifyToggle() {
  const [permission, setPermission] = useState(supported() ? Notification.permission : "denied");
  if (!supported()) return null;
  if (permission === "granted") return <span class="muted small">Notifying you of new questions</span>;
  if (permission === "denied")
    return <span class="muted small">Notifications are blocked for this page in the browser's settings</span>;
  return (
    <button type="button" class="quiet" onClick={async () => setPermission(await Notification.requestPermission())}>
      Notify me of new questions
    </button>
  );
}
