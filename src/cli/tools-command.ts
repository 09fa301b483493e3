import { z } from "zod";
import { TOOLS } from "../tools/catalogue.js";
import type { GlobalOptions } from "./global-options.js";
import { wantsJson, write } from "./output.js";

/** `arbeit tools`: the catalogue as hosts see it. */
export async function run(_argv: string[], options: GlobalOptions): Promise<number> {
  if (options.help) {
    write(
      1,
      "Usage: arbeit tools [--json]\n\nLists every tool; with --json, each with its JSON input schema and annotations.\n",
    );
    return 0;
  }
  if (wantsJson(options.json)) {
    const tools = TOOLS.map((tool) => ({
      name: tool.name,
      title: tool.title,
      description: tool.description,
      annotations: tool.annotations,
      input_schema: z.toJSONSchema(tool.input, { io: "input" }),
    }));
    write(1, `${JSON.stringify({ tools })}\n`);
  } else {
    write(1, TOOLS.map((tool) => `${tool.name.padEnd(26)} ${tool.description}\n`).join(""));
  }
  return 0;
}
