/**
 * The browser's own notifications, with the person's permission, while the dashboard is open: a
 * question an agent files, a claim going stale (its lease ran out), and a task the person follows
 * being completed. Only the tab that holds the live stream notifies, so several open tabs give one
 * notification, not one each; what happened before the page opened is no news, and each happening
 * is told once.
 *
 * The tasks a person follows are kept in this browser, in localStorage under `arbeit-followed`
 * (this dashboard's origin only, shared by its tabs): following is a person's wish to be told,
 * and changes nothing in the project.
 */
import { useEffect, useState } from "preact/hooks";
import type { InboxView, Notice, NoticesView } from "../contract.js";
import { getJson } from "./api.js";
import { leadsStream, useLiveChange } from "./live.js";

const seen = new Set<string>();
let primed = false;

const supported = () => typeof Notification !== "undefined";
const granted = () => supported() && Notification.permission === "granted";

function show(title: string, body: string, tag: string, href: string): void {
  // The tag makes a second notice of the same happening (another dashboard) replace the first.
  const note = new Notification(title, { body, tag });
  note.onclick = () => {
    window.focus();
    location.assign(href);
  };
}

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
  if (!granted() || !leadsStream()) return;
  for (const { entry, task } of fresh) show(`Question on ${task.title}`, entry.content, entry.id, "/inbox");
}

// ---- Followed tasks: kept in this browser.

const FOLLOWED_KEY = "arbeit-followed";
const followListeners = new Set<() => void>();

/** The tasks this browser follows. */
export function followedTasks(): Set<string> {
  try {
    const list: unknown = JSON.parse(localStorage.getItem(FOLLOWED_KEY) ?? "[]");
    return new Set(Array.isArray(list) ? list.filter((id): id is string => typeof id === "string") : []);
  } catch {
    return new Set();
  }
}

export function setFollowed(taskId: string, follow: boolean): void {
  const tasks = followedTasks();
  if (follow) tasks.add(taskId);
  else tasks.delete(taskId);
  localStorage.setItem(FOLLOWED_KEY, JSON.stringify([...tasks]));
  for (const listener of followListeners) listener();
}

/** Whether this browser follows `taskId`, kept true as other tabs follow or unfollow it. */
export function useFollowed(taskId: string): boolean {
  const [following, setFollowing] = useState(() => followedTasks().has(taskId));
  useEffect(() => {
    const update = () => setFollowing(followedTasks().has(taskId));
    update();
    const fromOtherTab = (event: StorageEvent) => {
      if (event.key === FOLLOWED_KEY) update();
    };
    followListeners.add(update);
    window.addEventListener("storage", fromOtherTab);
    return () => {
      followListeners.delete(update);
      window.removeEventListener("storage", fromOtherTab);
    };
  }, [taskId]);
  return following;
}

/** Asks the browser for permission to notify (a person's click must ask); resolves to what it says. */
export async function askPermission(): Promise<NotificationPermission> {
  if (!supported()) return "denied";
  const permission =
    Notification.permission === "default" ? await Notification.requestPermission() : Notification.permission;
  if (permission === "granted") void checkNotices();
  return permission;
}

// ---- Stale claims and completed tasks: read from /api/notices.

/** The seq after which events are news; undefined until the first read (the page's start). */
let cursor: number | undefined;
const told = new Set<string>();
let checking = false;
let again = false;
let leaseTimer: ReturnType<typeof setTimeout> | undefined;
/** A timer waits at most this long, then asks anyway (a browser cuts longer timers short). */
const LONGEST_WAIT_MS = 60 * 60 * 1000;
/** Asked this long after a lease's end, so that the database's clock has passed it too. */
const AFTER_LEASE_MS = 300;

function tell(notice: Notice): void {
  const title = notice.title ?? notice.task_id;
  const href = `/task/${encodeURIComponent(notice.task_id)}`;
  if (notice.kind === "task_completed")
    show(`Completed: ${title}`, `${notice.agent ?? "Someone"} completed a task you follow.`, notice.key, href);
  else
    show(
      `Stale claim on ${title}`,
      `The lease of ${notice.agent ?? "its holder"}${notice.session ? ` (session ${notice.session})` : ""} ran out.`,
      notice.key,
      href,
    );
}

/**
 * Reads what happened since the last read and notifies of what is news; then waits for the next
 * change of the store or the end of the first live lease, whichever comes first.
 */
async function checkNotices(): Promise<void> {
  if (!granted()) return;
  if (checking) {
    again = true;
    return;
  }
  checking = true;
  try {
    do {
      again = false;
      const view = await getJson<NoticesView>(cursor === undefined ? "/api/notices" : `/api/notices?after=${cursor}`);
      const opening = cursor === undefined;
      cursor = view.seq;
      const followed = followedTasks();
      for (const notice of view.notices) {
        if (told.has(notice.key)) continue;
        told.add(notice.key);
        // Claims already stale when the page opened are on the page: no news.
        if (opening || !leadsStream()) continue;
        if (notice.kind === "task_completed" && !followed.has(notice.task_id)) continue;
        tell(notice);
      }
      if (view.more) again = true;
      clearTimeout(leaseTimer);
      leaseTimer = undefined;
      if (view.next_lease_end !== null) {
        const wait = Date.parse(view.next_lease_end) - Date.parse(view.now) + AFTER_LEASE_MS;
        leaseTimer = setTimeout(() => void checkNotices(), Math.min(Math.max(wait, AFTER_LEASE_MS), LONGEST_WAIT_MS));
      }
    } while (again);
  } catch {
    // Offline or refused for a moment: the next change asks again.
  } finally {
    checking = false;
  }
}

/** Every notification of the page: questions from the inbox it loads, the rest from /api/notices. */
export function useNotifications(inbox: InboxView | undefined): void {
  useEffect(() => notifyNewQuestions(inbox), [inbox]);
  useEffect(() => void checkNotices(), []);
  useLiveChange(() => void checkNotices());
}

/** Asks the browser for permission to notify; shows where that stands. */
export function NotifyToggle() {
  const [permission, setPermission] = useState(supported() ? Notification.permission : "denied");
  if (!supported()) return null;
  if (permission === "granted")
    return <span class="muted small">Notifying you of new questions, stale claims and tasks you follow</span>;
  if (permission === "denied")
    return <span class="muted small">Notifications are blocked for this page in the browser's settings</span>;
  return (
    <button type="button" class="quiet" onClick={async () => setPermission(await askPermission())}>
      Notify me of new questions, stale claims and tasks I follow
    </button>
  );
}
