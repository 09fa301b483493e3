/**
 * A conservative token estimate for JSON an agent will read. Ids, timestamps and punctuation
 * tokenize at roughly 2-3 characters a token, so three characters a token overestimates
 * slightly for prose and keeps packets under the budget a real tokenizer measures.
 */
export function estimateTokens(value: unknown): number {
  return Math.ceil(JSON.stringify(value).length / 3);
}

export function truncateText(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, Math.max(0, max - 15))}… [cut ${text.length - max + 15} chars]`;
}
