/**
 * JSON as the pages write it: a value goes on one line (with spaces inside braces) when that line
 * stays short, and is spread over several lines otherwise. Used when an update rewrites a file
 * a page shows.
 */
const WIDTH = 100;

function inline(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(inline).join(", ")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value);
    if (entries.length === 0) return "{}";
    return `{ ${entries.map(([key, item]) => `${JSON.stringify(key)}: ${inline(item)}`).join(", ")} }`;
  }
  return JSON.stringify(value);
}

function format(value: unknown, indent: number, prefix: string): string {
  const pad = " ".repeat(indent);
  const flat = inline(value);
  if (indent > 0 && pad.length + prefix.length + flat.length <= WIDTH) return flat;
  if (Array.isArray(value) && value.length > 0) {
    const items = value.map((item) => `${pad}  ${format(item, indent + 2, "")}`);
    return `[\n${items.join(",\n")}\n${pad}]`;
  }
  if (value !== null && typeof value === "object" && Object.keys(value).length > 0) {
    const items = Object.entries(value).map(([key, item]) => {
      const label = `${JSON.stringify(key)}: `;
      return `${pad}  ${label}${format(item, indent + 2, label)}`;
    });
    return `{\n${items.join(",\n")}\n${pad}}`;
  }
  return flat;
}

export function formatJson(value: unknown): string {
  return format(value, 0, "");
}
