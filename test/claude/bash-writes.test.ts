import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { bashWrittenPaths } from "../../src/claude/bash-writes.js";

/** Which files a Bash command changes, as the line spells them, so that reservations hold for the shell too. */
describe("the files a shell command writes", () => {
  const cases: Array<[string, string[]]> = [
    ["echo hi > a.txt", ["a.txt"]],
    ["echo hi>>b.txt 2>/dev/null", ["b.txt"]],
    ["cmd &> run.log &", ["run.log"]],
    ["ls 2>&1 | grep x", []],
    ["cat x | tee -a c.txt d.txt", ["c.txt", "d.txt"]],
    ["sed -i 's/a/b/' e.ts f.ts", ["e.ts", "f.ts"]],
    ["sed -i.bak -e 's/a/b/' g.ts", ["g.ts"]],
    ["sed 's/a/b/' h.ts", []],
    ["mv old.ts new.ts", ["old.ts", "old.ts/**", "new.ts", "new.ts/**"]],
    ["cp j.ts k/l.ts", ["k/l.ts", "k/l.ts/**"]],
    ["cp -t dir u.ts v.ts", ["dir/u.ts", "dir/u.ts/**", "dir/v.ts", "dir/v.ts/**"]],
    ["rm -rf m/ n.ts", ["m/", "m/**", "n.ts", "n.ts/**"]],
    ["FOO=1 sudo touch s.ts && echo ok", ["s.ts"]],
    ["truncate -s 0 t.log", ["t.log"]],
    ["rm src/*.ts", ["src/*.ts", "src/*.ts/**"]],
    ["cd src && echo x > a.ts; (cd b && rm c) ; touch d", ["src/a.ts", "src/b/c", "src/b/c/**", "src/d"]],
    ['echo "x && y; z" > q.ts', ["q.ts"]],
    ["cd $DIR && rm -rf x; cd /abs && touch y", ["/abs/y"]],
    ["git -C sub commit -am msg -- file.ts", ["sub/file.ts", "sub/file.ts/**"]],
    ["sh -c 'cd a && ln -s /x b'", ["a/b"]],
    ["x=$(rm -f gone.ts)", ["gone.ts", "gone.ts/**"]],
    ["cat > p.txt <<EOF\nrm q.txt\nEOF", ["p.txt"]],
    ['git commit -m "a > b"', []],
    ["npm test", []],
  ];
  for (const [command, paths] of cases)
    it(`${JSON.stringify(command)} writes ${JSON.stringify(paths)}`, () => {
      assert.deepEqual(bashWrittenPaths(command), paths);
    });

  it("leaves alone what only the shell knows when it runs: variables and command substitutions", () => {
    assert.deepEqual(bashWrittenPaths("rm $(ls) $FILE"), []);
    assert.deepEqual(bashWrittenPaths('echo "$(date)" > out.txt'), ["out.txt"]);
    assert.deepEqual(bashWrittenPaths("echo x > $OUT"), []);
  });
});
