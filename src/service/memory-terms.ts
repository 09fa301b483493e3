import type { MemoryEntry } from "../domain/types.js";

/**
 * The words of memory entries, compared without any model: an entry's terms are the distinct
 * lowercased runs of letters and digits in its key and its value's JSON, less words that carry no
 * meaning ("the", "and", a JSON `true`) and single characters. Two entries say the same thing when
 * their terms overlap (Jaccard: shared terms over all terms) by at least SIMILAR_AT; an entry
 * matters to a task by how many of its terms the task's own words hold.
 */

/** The overlap from which two entries count as saying the same thing. */
export const SIMILAR_AT = 0.5;

const STOP_WORDS = new Set(
  (
    "a an and are as at be but by do does for from has have if in into is it its no not of on or " +
    "so than that the then there these this those to was were when which while will with " +
    "true false null"
  ).split(" "),
);

/** The distinct meaningful words of a text. */
export function terms(text: string): Set<string> {
  const out = new Set<string>();
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    if (word.length > 1 && !STOP_WORDS.has(word)) out.add(word);
  }
  return out;
}

/** An entry's words: its key's and its value's. */
export const entryTerms = (entry: Pick<MemoryEntry, "key" | "value">): Set<string> =>
  terms(`${entry.key} ${typeof entry.value === "string" ? entry.value : JSON.stringify(entry.value)}`);

const shared = (a: ReadonlySet<string>, b: ReadonlySet<string>) => {
  let n = 0;
  for (const term of a) if (b.has(term)) n++;
  return n;
};

/** Shared terms over all terms, 0 to 1; two entries without a meaningful word share nothing. */
export function overlap(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  const both = shared(a, b);
  const all = a.size + b.size - both;
  return all === 0 ? 0 : both / all;
}

export interface SimilarPair {
  keys: [string, string];
  /** The overlap, rounded to two places. */
  score: number;
}

/**
 * The pairs of entries whose terms overlap by SIMILAR_AT or more, most alike first (then by key);
 * with `of`, only the pairs that include that key.
 */
export function similarPairs(entries: readonly MemoryEntry[], of?: string): SimilarPair[] {
  const words = entries.map(entryTerms);
  const pairs: SimilarPair[] = [];
  for (let i = 0; i < entries.length; i++) {
    for (let j = i + 1; j < entries.length; j++) {
      const [a, b] = [entries[i]!, entries[j]!];
      if (of !== undefined && a.key !== of && b.key !== of) continue;
      const score = overlap(words[i]!, words[j]!);
      if (score >= SIMILAR_AT) pairs.push({ keys: [a.key, b.key], score: Math.round(score * 100) / 100 });
    }
  }
  return pairs.sort(
    (x, y) => y.score - x.score || x.keys[0].localeCompare(y.keys[0]) || x.keys[1].localeCompare(y.keys[1]),
  );
}

/** The words a task is known by: its title, description, files and metadata labels. */
export function taskTerms(task: {
  title: string;
  description?: string | null;
  metadata?: Record<string, unknown> | null;
  files?: readonly string[];
}): Set<string> {
  const labels = task.metadata?.labels;
  const labelText = Array.isArray(labels) ? labels.filter((label) => typeof label === "string").join(" ") : "";
  return terms([task.title, task.description ?? "", ...(task.files ?? []), labelText].join(" "));
}

/**
 * Orders entries by how many of the task's terms each holds, most first; entries that hold as
 * many keep the order they came in (the store's: most reinforced, then most recently set).
 */
export function byRelevance<T extends Pick<MemoryEntry, "key" | "value">>(
  entries: readonly T[],
  task: ReadonlySet<string>,
): T[] {
  if (task.size === 0) return [...entries];
  const scored = entries.map((entry, index) => ({ entry, index, hits: shared(entryTerms(entry), task) }));
  scored.sort((a, b) => b.hits - a.hits || a.index - b.index);
  return scored.map((item) => item.entry);
}
