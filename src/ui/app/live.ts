/**
 * Live updates: one event stream from /api/live; every `change` (debounced) bumps a counter that
 * views watch to reload their data. A view's data loader never runs twice at once: a change
 * that arrives during a load is taken up by one more load after it.
 */
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { errorText, seqOf } from "./api.js";
import { authorization, tokenRefused } from "./token.js";

export type Connection = "connecting" | "live" | "offline";

const changeListeners = new Set<(seq: number) => void>();
const connectionListeners = new Set<(state: Connection) => void>();
let connection: Connection = "connecting";
let debounce: ReturnType<typeof setTimeout> | undefined;
let pending = -1;
/** Whether this tab holds the dashboard's one event stream (the others hear from it). */
let leading = false;

export const leadsStream = (): boolean => leading;

/** Tells every view the store's newest seq (debounced); Infinity when what changed is unknown. */
function announceChange(seq: number): void {
  pending = Math.max(pending, seq);
  clearTimeout(debounce);
  debounce = setTimeout(() => {
    const newest = pending;
    pending = -1;
    for (const listener of changeListeners) listener(newest);
  }, 50);
}

function setConnection(state: Connection): void {
  if (state === connection) return;
  const wasOffline = connection === "offline";
  connection = state;
  for (const listener of connectionListeners) listener(state);
  // Back after a break: whatever changed meanwhile was not announced.
  if (state === "live" && wasOffline) announceChange(Number.POSITIVE_INFINITY);
}

/** What the tab holding the stream tells the dashboard's other tabs. */
type LiveMessage = { type: "change"; seq: number } | { type: "connection"; state: Connection } | { type: "hello" };

/** A break in the stream is retried after this long (what the server's `retry:` says too). */
const RETRY_MS = 1000;

/**
 * Reads the server-sent events of /api/live and hands each `change` notice to `onChange`. The
 * stream is read with fetch, not EventSource, because EventSource cannot send the token's
 * Authorization header. Resolves when the stream ends; throws when it cannot be opened.
 */
async function readStream(onOpen: () => void, onChange: (seq: number) => void): Promise<void> {
  const response = await fetch("/api/live", {
    credentials: "omit",
    cache: "no-store",
    headers: { ...authorization(), Accept: "text/event-stream" },
  });
  if (response.status === 401) tokenRefused();
  if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
  onOpen();
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value.replaceAll("\r\n", "\n");
    for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
      const lines = buffer.slice(0, end).split("\n");
      buffer = buffer.slice(end + 2);
      if (!lines.includes("event: change")) continue;
      const data = lines.find((line) => line.startsWith("data:"))?.slice("data:".length);
      let seq = Number.POSITIVE_INFINITY;
      try {
        seq = Number((JSON.parse(data ?? "") as { seq: number }).seq);
      } catch {}
      onChange(Number.isNaN(seq) ? Number.POSITIVE_INFINITY : seq);
    }
  }
}

/**
 * Keeps the event stream open and hands each notice to this tab (and, through `share`, to the
 * others), opening it again a second after any break.
 */
function openStream(share: (message: LiveMessage) => void): void {
  const connected = (state: Connection) => {
    setConnection(state);
    share({ type: "connection", state });
  };
  const onChange = (seq: number) => {
    connected("live");
    announceChange(seq);
    share({ type: "change", seq });
  };
  void (async () => {
    for (;;) {
      try {
        await readStream(() => connected("live"), onChange);
      } catch {}
      connected("offline");
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
  })();
}

/**
 * Live notices for every open tab of this dashboard through ONE event stream. A browser keeps at
 * most six connections to a server over HTTP/1.1, and an event stream holds one for good: with a
 * stream per tab, the seventh tab could load nothing. So one tab (whichever holds the Web Lock)
 * keeps the stream and passes each notice to the other tabs on a BroadcastChannel; when it
 * closes, another tab takes the lock and the stream over.
 */
export function startLive(): void {
  if (typeof ReadableStream === "undefined" || typeof TextDecoderStream === "undefined") {
    setConnection("offline");
    return;
  }
  const locks = (navigator as Navigator & { locks?: LockManager }).locks;
  if (typeof BroadcastChannel === "undefined" || !locks) {
    leading = true;
    openStream(() => {});
    return;
  }
  const channel = new BroadcastChannel(`arbeit-live:${location.host}`);
  channel.addEventListener("message", (event: MessageEvent<LiveMessage>) => {
    const message = event.data;
    if (message.type === "hello") {
      if (leading) channel.postMessage({ type: "connection", state: connection } satisfies LiveMessage);
    } else if (message.type === "connection") setConnection(message.state);
    else if (message.type === "change") {
      setConnection("live");
      announceChange(message.seq);
    }
  });
  const lead = (tookOver: boolean) => {
    leading = true;
    // Taking over from a tab that closed: notices between its end and this stream were missed.
    if (tookOver) announceChange(Number.POSITIVE_INFINITY);
    openStream((message) => channel.postMessage(message));
    // Held until this tab closes: the lock's promise never settles.
    return new Promise<void>(() => {});
  };
  // The first tab leads at once; any other waits for the lock, and takes over when it frees.
  void locks.request("arbeit-live-stream", { ifAvailable: true }, (lock) => {
    if (lock) return lead(false);
    void locks.request("arbeit-live-stream", () => lead(true));
    return undefined;
  });
  channel.postMessage({ type: "hello" } satisfies LiveMessage);
}

export function useConnection(): Connection {
  const [state, setState] = useState(connection);
  useEffect(() => {
    connectionListeners.add(setState);
    setState(connection);
    return () => {
      connectionListeners.delete(setState);
    };
  }, []);
  return state;
}

/** Calls `listener` with the newest seq after each (debounced) change of the store. */
export function useLiveChange(listener: (seq: number) => void): void {
  const ref = useRef(listener);
  ref.current = listener;
  useEffect(() => {
    const call = (seq: number) => ref.current(seq);
    changeListeners.add(call);
    return () => {
      changeListeners.delete(call);
    };
  }, []);
}

export interface Resource<T> {
  data: T | undefined;
  error: { code: string; message: string } | undefined;
  loading: boolean;
  /** Loads again (after a write, or on a person's "Reload"). */
  reload: () => Promise<void>;
}

/**
 * The data behind a view: loaded when `key` changes and again after every change of the store.
 * The data shown stays while a new load runs, so the page never blanks and forms keep their input.
 */
export function useResource<T>(key: string, load: () => Promise<T>, enabled = true): Resource<T> {
  const [state, setState] = useState<{ key: string; data?: T; error?: { code: string; message: string } }>({ key });
  const [loading, setLoading] = useState(true);
  // `seq`: the store's state the shown data is known to include (-1: unknown, so any change counts).
  // `wanted`: the newest seq announced, which the data must catch up with.
  const current = useRef({ key, load, enabled, running: false, again: false, seq: -1, wanted: -1 });
  current.current.key = key;
  current.current.load = load;
  current.current.enabled = enabled;

  const run = useCallback(async (): Promise<void> => {
    const ref = current.current;
    if (!ref.enabled) return;
    if (ref.running) {
      ref.again = true;
      return;
    }
    ref.running = true;
    setLoading(true);
    try {
      do {
        ref.again = false;
        // What this load reads answers every notice so far; a later one is judged when it ends.
        ref.wanted = -1;
        const key = ref.key;
        try {
          const data = await ref.load();
          if (key === ref.key) {
            ref.seq = seqOf(data) ?? -1;
            setState({ key, data });
            // A change announced while this load ran, and not in what it read: load once more.
            if (ref.wanted > ref.seq) ref.again = true;
          }
        } catch (error) {
          if (key === ref.key)
            setState((old) => ({ key, data: old.key === key ? old.data : undefined, error: errorText(error) }));
        }
      } while (ref.again);
    } finally {
      ref.running = false;
      setLoading(false);
    }
  }, []);

  useEffect(() => {
    current.current.again = true;
    void run();
  }, [key, enabled, run]);
  // The first notice after connecting names the seq the page's data was read at: no second load.
  useLiveChange((seq) => {
    const ref = current.current;
    ref.wanted = Math.max(ref.wanted, seq);
    // A load under way decides when it ends, by the seq it read.
    if (!ref.running && seq > ref.seq) void run();
  });

  const fresh = state.key === key;
  return { data: fresh ? state.data : undefined, error: fresh ? state.error : undefined, loading, reload: run };
}

let tickers = new Set<(now: number) => void>();
let tickTimer: ReturnType<typeof setInterval> | undefined;

/** The browser's clock, ticking every second while a component shows a countdown. */
export function useTick(): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    tickers.add(setNow);
    tickTimer ??= setInterval(() => {
      const now = Date.now();
      for (const ticker of tickers) ticker(now);
    }, 1000);
    return () => {
      tickers.delete(setNow);
      if (tickers.size === 0) {
        clearInterval(tickTimer);
        tickTimer = undefined;
        tickers = new Set();
      }
    };
  }, []);
  return now;
}
