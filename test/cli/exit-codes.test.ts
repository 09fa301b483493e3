import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { assertToolError, assertUsageError, type CliProject, cliProject } from "./support.js";

/**
 * Exit 0 on success; 1 on any tool error, schema failures included, with the failure
 * envelope on stdout; 2 on a usage error of the CLI itself, with the message on stderr and
 * nothing on stdout.
 */
describe("exit codes", () => {
  let project: CliProject;
  let taskId: string;

  before(async () => {
    project = await cliProject();
    taskId = (await project.ok(["task", "create", "Exit code fixture"])).task.id;
  });
  after(() => project.cleanup());

  describe("1: tool errors print the failure envelope on stdout", () => {
    it("TASK_NOT_FOUND for an id that does not exist, with a suggestion", async () => {
      const result = await project.run(["task", "get", "tkt-zzzzzzzz"]);
      assertToolError(result, "TASK_NOT_FOUND");
      assert.ok(result.json.error.suggestions.length > 0);
      assert.equal(result.stderr, "");
    });

    it("INVALID_STATUS for a status outside the enum, from a friendly flag", async () => {
      const result = await project.run(["task", "update", taskId, "--status", "done"]);
      assertToolError(result, "INVALID_STATUS");
      assert.match(result.json.error.message, /status/);
    });

    it("INVALID_STATUS from arbeit call too: the same schema, the same code", async () => {
      const result = await project.run([
        "call",
        "arbeit_task_update",
        JSON.stringify({ task_id: taskId, status: "done" }),
      ]);
      assertToolError(result, "INVALID_STATUS");
    });

    it("INVALID_TYPE for an unknown context type", async () => {
      assertToolError(await project.run(["context", "add", taskId, "musing", "hmm"]), "INVALID_TYPE");
    });

    it("INVALID_ID for a malformed task id", async () => {
      assertToolError(await project.run(["task", "get", "login-bug"]), "INVALID_ID");
    });

    it("TITLE_REQUIRED when the title is missing", async () => {
      assertToolError(await project.run(["task", "create"]), "TITLE_REQUIRED");
    });

    it("INVALID_ARGUMENT for JSON arguments of the wrong shape", async () => {
      const result = await project.run([
        "call",
        "arbeit_progress_add",
        JSON.stringify({ task_id: taskId, items: "one" }),
      ]);
      assertToolError(result, "INVALID_ARGUMENT");
      assert.match(result.json.error.message, /items/);
    });

    it("INVALID_ARGUMENT for an argument the tool does not take", async () => {
      const result = await project.run(["call", "arbeit_task_get", JSON.stringify({ task_id: taskId, verbose: true })]);
      assertToolError(result, "INVALID_ARGUMENT");
    });

    it("INVALID_ARGUMENT for a number flag given text", async () => {
      assertToolError(await project.run(["query", "ready", "--limit", "five"]), "INVALID_ARGUMENT");
    });

    it("UNKNOWN_QUERY for a query that does not exist", async () => {
      const result = await project.run(["query", "everything"]);
      assertToolError(result, "UNKNOWN_QUERY");
    });

    it("a domain rule: ALREADY_INITIALIZED on a second init", async () => {
      assertToolError(await project.run(["init"]), "ALREADY_INITIALIZED");
    });

    it("0 again once the call is right", async () => {
      const result = await project.run(["task", "update", taskId, "--status", "cancelled"]);
      assert.equal(result.code, 0);
      assert.equal(result.json.data.task.status, "cancelled");
    });
  });

  describe("2: usage errors print a message on stderr and nothing on stdout", () => {
    it("an unknown command, with the closest command suggested", async () => {
      const result = await project.run(["tsk", "create", "x"]);
      assertUsageError(result, /Unknown command "tsk create x"/);
      assert.match(result.stderr, /Did you mean task create\?/);
    });

    it("a command named like what every JavaScript object has is an unknown command too", async () => {
      for (const word of ["constructor", "toString", "__proto__", "hasOwnProperty"]) {
        for (const words of [[word], ["task", word], ["help", word], ["query", word, "--help"]]) {
          const result = await project.run(words);
          if (words[0] === "query") {
            // A query name is the tool's to judge: UNKNOWN_QUERY would need no help flag; help lists them all.
            assert.equal(result.code, 0, `${words.join(" ")}: ${result.stderr}`);
            assert.match(result.stdout, /Queries/);
            continue;
          }
          assertUsageError(result, /Unknown command/);
          assert.doesNotMatch(result.stderr, /unexpected failure|TypeError/);
        }
      }
    });

    it("an unknown subcommand lists the group's subcommands", async () => {
      const result = await project.run(["task", "finish", taskId]);
      assertUsageError(result, /Unknown command "task finish/);
      assert.match(result.stderr, /task start-work <task_id>/);
    });

    it("a group without its subcommand", async () => {
      const result = await project.run(["progress"]);
      assertUsageError(result, /Name a subcommand of progress/);
      assert.match(result.stderr, /progress add <task_id> <items\.\.\.>/);
    });

    it("no command at all prints the overview on stderr", async () => {
      const result = await project.run([]);
      assertUsageError(result, /Name a command/);
      assert.match(result.stderr, /task create <title>/);
    });

    it("an unknown flag, with the closest flag suggested and the command's help named", async () => {
      const result = await project.run(["task", "create", "x", "--tpye", "bug"]);
      assertUsageError(result, /Unknown flag --tpye\. Did you mean --type\?/);
      assert.match(result.stderr, /arbeit task create --help/);
    });

    it("an unknown single-letter flag", async () => {
      assertUsageError(await project.run(["task", "create", "x", "-p", "1"]), /Unknown flag -p/);
    });

    it("an unknown query flag names the query's help", async () => {
      const result = await project.run(["query", "tasks", "--colour", "red"]);
      assertUsageError(result, /Unknown flag --colour/);
      assert.match(result.stderr, /arbeit query tasks --help/);
    });

    it("a flag without its value", async () => {
      assertUsageError(await project.run(["task", "create", "x", "--priority"]), /--priority needs a value/);
    });

    it("a global option without its value", async () => {
      assertUsageError(await project.run(["task", "get", taskId, "--db"]), /--db needs a value/);
    });

    it("a word too many", async () => {
      assertUsageError(await project.run(["task", "get", taskId, "extra"]), /Unexpected argument "extra"/);
    });

    it("JSON that does not parse", async () => {
      const result = await project.run(["call", "arbeit_task_get", "{task_id: tkt}"]);
      assertUsageError(result, /not valid JSON/);
      assert.match(result.stderr, /arbeit call --help/);
    });

    it("a JSON flag that does not parse", async () => {
      assertUsageError(
        await project.run(["context", "add", taskId, "note", "n", "--metadata", "{oops"]),
        /--metadata needs JSON/,
      );
    });

    it("arbeit call without a tool name", async () => {
      const result = await project.run(["call"]);
      assertUsageError(result, /Name the tool to call/);
      assert.match(result.stderr, /arbeit_task_create/);
    });

    it("arbeit call with a tool that does not exist, with the closest name suggested", async () => {
      assertUsageError(
        await project.run(["call", "task_get", "{}"]),
        /no tool named "task_get"\. Did you mean arbeit_task_get\?/,
      );
    });

    it("arbeit call with arguments split over several words", async () => {
      assertUsageError(
        await project.run(["call", "arbeit_task_get", "{}", "{}"]),
        /pass all arguments as one JSON object/,
      );
    });

    it("arbeit query without a query name", async () => {
      assertUsageError(await project.run(["query"]), /Name the query/);
    });

    it("arbeit track without a path", async () => {
      const result = await project.run(["track"]);
      assertUsageError(result, /Name the file/);
      assert.match(result.stderr, /arbeit track --help/);
    });
  });
});
