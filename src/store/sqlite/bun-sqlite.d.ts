// The slice of bun:sqlite the Bun driver uses. Declared here rather than pulling in bun-types,
// whose globals clash with @types/node.
declare module "bun:sqlite" {
  type Param = string | number | bigint | null | Uint8Array;
  interface Statement {
    run(...params: Param[]): { changes: number; lastInsertRowid: number | bigint };
    get(...params: Param[]): unknown;
    all(...params: Param[]): unknown[];
    values(...params: Param[]): unknown[][];
  }
  export class Database {
    constructor(path: string, options?: { create?: boolean; readonly?: boolean; strict?: boolean });
    prepare(sql: string): Statement;
    exec(sql: string): void;
    close(): void;
  }
}
