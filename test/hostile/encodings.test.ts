import assert from "node:assert/strict";
import { it } from "node:test";
import { forEachEngine } from "./engines.js";

/**
 * Text in every script and shape comes back exactly as it went in, on both stores; what is not
 * text (NUL, half a surrogate pair, bytes that are not UTF-8) is refused with a clear error and
 * writes nothing.
 */
const HARD_TEXT = [
  "Zürich naïve café", // Latin with precomposed accents
  "e\u0301 a\u0308 combining marks", // decomposed: must not be normalised away
  "👩‍👩‍👧‍👦 family 🏳️‍🌈 flag 𝄞 clef", // ZWJ sequences and astral characters
  "עברית مرحبا \u202eevil\u202c", // right-to-left text and a bidi override, kept as data
  "日本語のタイトル 한국어 中文",
  "tab\there, line\nbreak, \\backslash\\ \"quotes\" 'single'",
  "'; DROP TABLE tasks; --",
  "%s %d ${x} {{y}} $1 ?",
  "\uFEFF byte order mark and \u200B zero width space",
  "\u{10FFFF} highest code point",
];

forEachEngine("text in any encoding", (project) => {
  it("comes back byte for byte in titles, descriptions, context, progress, memory and names", async () => {
    const { ok, call } = await project();
    for (const text of HARD_TEXT) {
      // Names take no control characters: the same text with those made spaces.
      const agent = [...text]
        .map((c) => (c.charCodeAt(0) < 0x20 || c === "\u007f" ? " " : c))
        .join("")
        .slice(0, 100);
      const { task } = await ok("arbeit_task_create", { title: text, description: text }, { agent });
      const { entry } = await ok("arbeit_context_add", { task_id: task.id, type: "note", content: text });
      await ok("arbeit_progress_add", { task_id: task.id, items: [text] });
      await ok("arbeit_memory", { action: "set", scope: "project", key: text.slice(0, 50), value: { text } });
      const got = await ok("arbeit_task_get", { task_id: task.id, include: ["context", "progress", "recent_events"] });
      assert.equal(got.task.title, text);
      assert.equal(got.task.description, text);
      assert.equal(got.context.find((e: any) => e.id === entry.id).content, text);
      assert.equal(got.progress.items?.[0]?.content ?? got.progress[0]?.content, text);
      const memory = await call("arbeit_memory", { action: "get", scope: "project", key: text.slice(0, 50) });
      assert.equal(memory.success, true, JSON.stringify(memory));
      assert.deepEqual(memory.data.entry?.value ?? memory.data.value, { text });
      const events = await ok("arbeit_query", { query: "events", params: { task_id: task.id } });
      assert.ok(events.events.some((event: any) => event.agent === agent));
    }
  });

  it("refuses NUL and lone surrogates in any text field, writing nothing", async () => {
    const { call, ok } = await project();
    for (const bad of ["nul \u0000 inside", "half \ud800 pair", "other half \udc00"]) {
      for (const args of [{ title: bad }, { title: "ok", description: bad }, { title: "ok", metadata: { [bad]: 1 } }]) {
        const envelope = await call("arbeit_task_create", args);
        assert.equal(envelope.success, false, JSON.stringify(args));
        assert.notEqual(envelope.error.code, "INTERNAL_ERROR", JSON.stringify(envelope.error));
      }
    }
    const { tasks } = await ok("arbeit_query", { query: "tasks" });
    assert.deepEqual(tasks, []);
  });

  it("refuses arguments on stdin that are not UTF-8, instead of guessing", async () => {
    const { cli, ok } = await project();
    const latin1 = Buffer.concat([Buffer.from('{"title": "caf'), Buffer.from([0xe9]), Buffer.from('"}')]);
    const result = await cli(["call", "arbeit_task_create", "-"], { input: latin1 });
    assert.notEqual(result.code, 0);
    assert.match(result.stdout + result.stderr, /not valid UTF-8/);
    assert.deepEqual((await ok("arbeit_query", { query: "tasks" })).tasks, []);
  });
});
