/**
 * `word` with its indefinite article: "an epic", "an investigation", "a feature". Messages put
 * type, field and table names after an article; the names Arbeit uses are all read as spelled,
 * so the first letter decides.
 */
export function withArticle(word: string): string {
  return `${/^[aeiou]/i.test(word) ? "an" : "a"} ${word}`;
}
