/**
 * What may legitimately differ between a page's shown output and a real run, and how the two are
 * brought together: ids are mapped (so references stay meaningful), times, durations and version
 * numbers are masked, trailing spaces are ignored. Everything else must match.
 */

const ID = /\b(?:tkt|ctx|prg|rel|evt|fle|ses|mem)-[a-z0-9]{8}\b/g;
const TIMESTAMP = /\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z\b/g;
const DURATION = /\b\d+(?:\.\d+)?\s?(?:ms|s)\b/g;
const VERSION = /\b\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?\b/g;

function inOrder(text: string, pattern: RegExp): string[] {
  return [...new Set(text.match(pattern) ?? [])];
}

/**
 * Real ids from the run against the ids the page shows. Pairs are learnt in order of first
 * appearance: the first id a run prints that has no partner yet goes with the first id of the
 * same kind the page shows there that has none either, and keeps it for the rest of the page.
 */
export class IdMap {
  readonly #toDoc = new Map<string, string>();
  readonly #toReal = new Map<string, string>();

  clone(): IdMap {
    const copy = new IdMap();
    for (const [real, doc] of this.#toDoc) copy.#pair(real, doc);
    return copy;
  }

  #pair(real: string, doc: string): void {
    this.#toDoc.set(real, doc);
    this.#toReal.set(doc, real);
  }

  learn(actual: string, expected: string): void {
    // `actual` may already carry page ids for the pairs known so far.
    const fresh = inOrder(actual, ID).filter((id) => !this.#toDoc.has(id) && !this.#toReal.has(id));
    const free = inOrder(expected, ID).filter((id) => !this.#toReal.has(id));
    for (const real of fresh) {
      const index = free.findIndex((doc) => doc.slice(0, 3) === real.slice(0, 3));
      if (index >= 0) this.#pair(real, free.splice(index, 1)[0]!);
    }
  }

  toDoc(text: string): string {
    return text.replace(ID, (id) => this.#toDoc.get(id) ?? id);
  }

  /** A command from the page, with the ids it names turned into the run's. Unknown ids pass as they are. */
  toReal(text: string): string {
    return text.replace(ID, (id) => this.#toReal.get(id) ?? id);
  }
}

/** The pairs of a longest common subsequence of two outputs' lines, compared masked. */
function matchingLines(a: string[], b: string[]): [string, string][] {
  const am = a.map(mask);
  const bm = b.map(mask);
  const length = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      length[i]![j] = am[i] === bm[j] ? length[i + 1]![j + 1]! + 1 : Math.max(length[i + 1]![j]!, length[i]![j + 1]!);
    }
  }
  const pairs: [string, string][] = [];
  for (let i = 0, j = 0; i < a.length && j < b.length; ) {
    if (am[i] === bm[j]) pairs.push([a[i++]!, b[j++]!]);
    else if (length[i + 1]![j]! >= length[i]![j + 1]!) i++;
    else j++;
  }
  return pairs;
}

export function tidy(text: string): string {
  return text
    .replaceAll("\r\n", "\n")
    .split("\n")
    .map((line) => line.trimEnd())
    .join("\n")
    .replace(/\n+$/, "");
}

/** The form in which shown and real output are compared. */
export function mask(text: string): string {
  return tidy(text).replace(TIMESTAMP, "<time>").replace(DURATION, "<duration>").replace(VERSION, "<version>");
}

/**
 * Real times against the times a page shows, so that an update keeps the page's own times instead
 * of churning every one. Learnt by position; a moment met again (two events of one write, a task's
 * `updated` shown later in its history) keeps the time it was first given, and a new moment is
 * placed as far from the last known one as it really was.
 */
export class TimeMap {
  readonly #toDoc = new Map<string, string>();
  #offset: number | undefined;

  clone(): TimeMap {
    const copy = new TimeMap();
    for (const [real, doc] of this.#toDoc) copy.#toDoc.set(real, doc);
    copy.#offset = this.#offset;
    return copy;
  }

  /**
   * Only from lines that are the same but for their volatile parts: in a line that changed (a
   * task's `updated` after one more write) the old time stands for a different moment.
   */
  learn(actual: string, shown: string): void {
    for (const [real, doc] of matchingLines(actual.split("\n"), shown.split("\n"))) {
      const old = doc.match(TIMESTAMP) ?? [];
      (real.match(TIMESTAMP) ?? []).forEach((time, k) => {
        if (old[k] === undefined || this.#toDoc.has(time)) return;
        this.#toDoc.set(time, old[k]);
        this.#offset = Date.parse(old[k]) - Date.parse(time);
      });
    }
  }

  toDoc(text: string): string {
    return text.replace(TIMESTAMP, (real) => {
      const known = this.#toDoc.get(real);
      if (known !== undefined) return known;
      return this.#offset === undefined ? real : new Date(Date.parse(real) + this.#offset).toISOString();
    });
  }
}

/** The real output as the page should show it: the page's own times, and its durations where it has some. */
export function keepShownVolatiles(actual: string, shown: string, times: TimeMap): string {
  times.learn(actual, shown);
  const old = shown.match(DURATION) ?? [];
  let k = 0;
  return times.toDoc(actual).replace(DURATION, (value) => old[k++] ?? value);
}
