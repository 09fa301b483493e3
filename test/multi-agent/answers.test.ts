import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import { alice, ENGINES, type EngineProject, footprint, onEngine, openEngineProject, task } from "./helpers.js";

/**
 * A person answers a session's question: the session's live `blocker` entry is the question, and
 * the answer is a `user_input` that supersedes it, added by `human:<name>`. The session hears it
 * first, and once, whichever way it looks next: arbeit_resume or the news its host tells it.
 */

const person = { agent: "human:alice", session: "agent:human:alice" };
/** The session at work: an agent named alice (not the person). */
const worker = alice;

for (const engine of ENGINES)
  describe(`a person's answers on ${engine}`, await onEngine(engine), () => {
    let project: EngineProject;
    let id: string;
    beforeEach(async () => {
      project = await openEngineProject(engine);
      id = await task(project, "Pick a store", { priority: 0 });
      await project.ok("arbeit_task_start_work", { task_id: id }, worker);
      // The session has looked once: news and answers count from here.
      await project.ok("arbeit_resume", {}, worker);
    });
    afterEach(() => project.close());

    const ask = async (question: string): Promise<string> =>
      (await project.ok("arbeit_context_add", { task_id: id, type: "blocker", content: question }, worker)).entry.id;
    const answer = async (question: string | undefined, content: string): Promise<string> =>
      (
        await project.ok(
          "arbeit_context_add",
          { task_id: id, type: "user_input", content, ...(question ? { supersede_entry_id: question } : {}) },
          person,
        )
      ).entry.id;
    const news = async (advance: boolean | "when-told" = true) =>
      (await project.service.sessionNews(worker, { advance })).data.news.map((item) => item.text);

    describe("in arbeit_resume", () => {
      it("come first in the packet, each with who answered and the question it answers", async () => {
        const question = await ask("Which DB?");
        const entry = await answer(question, "Use Postgres.");
        const packet = await project.ok("arbeit_resume", {}, worker);
        assert.equal(Object.keys(packet)[0], "answers");
        assert.equal(packet.answers.length, 1);
        const [shown] = packet.answers;
        assert.equal(shown.entry_id, entry);
        assert.equal(shown.task_id, id);
        assert.equal(shown.by, "human:alice");
        assert.equal(shown.content, "Use Postgres.");
        assert.deepEqual(shown.question, { entry_id: question, content: "Which DB?" });
        // The question is answered: no longer live context.
        assert.ok(!packet.context.some((entry: { id: string }) => entry.id === question));
      });

      it("are shown once: the next resume has none", async () => {
        await answer(await ask("Which DB?"), "Use Postgres.");
        assert.equal((await project.ok("arbeit_resume", {}, worker)).answers.length, 1);
        assert.deepEqual((await project.ok("arbeit_resume", {}, worker)).answers, []);
      });

      it("are shown again after a peek, which moves nothing", async () => {
        await answer(await ask("Which DB?"), "Use Postgres.");
        assert.equal((await project.ok("arbeit_resume", { peek: true }, worker)).answers.length, 1);
        assert.equal((await project.ok("arbeit_resume", {}, worker)).answers.length, 1);
      });

      it("include a person's word that answers no question, with the question null", async () => {
        await answer(undefined, "Keep it small.");
        const [shown] = (await project.ok("arbeit_resume", {}, worker)).answers;
        assert.equal(shown.content, "Keep it small.");
        assert.equal(shown.question, null);
      });

      it("leave out the session's own user_input, and other tasks' answers", async () => {
        await project.ok(
          "arbeit_context_add",
          { task_id: id, type: "user_input", content: "the user said so" },
          worker,
        );
        const other = await task(project, "Other work");
        await project.ok("arbeit_context_add", { task_id: other, type: "user_input", content: "elsewhere" }, person);
        assert.deepEqual((await project.ok("arbeit_resume", {}, worker)).answers, []);
      });

      it("survive the tightest budget whole", async () => {
        for (let i = 0; i < 20; i++)
          await project.ok("arbeit_context_add", {
            task_id: id,
            type: "note",
            content: `note ${i} ${"x".repeat(200)}`,
          });
        await answer(await ask("Which DB?"), "Use Postgres.");
        const packet = await project.ok("arbeit_resume", { max_tokens: 400 }, worker);
        assert.ok(packet.budget.cut.length > 0);
        assert.equal(packet.answers[0].content, "Use Postgres.");
      });
    });

    describe("in the session's news", () => {
      it("read as the answer to the question", async () => {
        await answer(await ask("Which DB?"), "Use Postgres.");
        assert.deepEqual(await news(), [`human:alice answered the question on ${id} ("Which DB?"): Use Postgres.`]);
        assert.deepEqual(await news(), []);
      });

      it("are not told again once arbeit_resume showed them, nor shown by resume once told", async () => {
        await answer(await ask("Which DB?"), "Use Postgres.");
        assert.equal((await project.ok("arbeit_resume", {}, worker)).answers.length, 1);
        assert.deepEqual(await news(), []);
        await answer(await ask("Which port?"), "5432.");
        assert.deepEqual(await news(), [`human:alice answered the question on ${id} ("Which port?"): 5432.`]);
        assert.deepEqual((await project.ok("arbeit_resume", {}, worker)).answers, []);
      });

      it("read after every tool call write nothing until there is something to tell", async () => {
        // The session's own changes are not news: the read leaves every row as it was.
        await project.ok("arbeit_context_add", { task_id: id, type: "note", content: "my own note" }, worker);
        const before = await footprint(project);
        assert.deepEqual(await news("when-told"), []);
        assert.deepEqual(await footprint(project), before);
        await answer(await ask("Which DB?"), "Use Postgres.");
        assert.deepEqual(await news("when-told"), [
          `human:alice answered the question on ${id} ("Which DB?"): Use Postgres.`,
        ]);
        // Told, and the cursor moved past it: neither way of looking tells it again.
        assert.deepEqual(await news("when-told"), []);
        assert.deepEqual(await news(), []);
      });

      it("read after every tool call move the cursor when more events came than one read takes", async () => {
        for (let i = 0; i < 101; i++)
          await project.ok("arbeit_context_add", { task_id: id, type: "note", content: `own note ${i}` }, worker);
        const seq = (await footprint(project)).seq;
        assert.deepEqual(await news("when-told"), []);
        const state = await project.store.read((tx) => tx.sessionState(worker.session));
        assert.equal(state?.cursor_seq, seq);
      });
    });
  });
