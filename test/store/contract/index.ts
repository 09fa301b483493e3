import { agentContract } from "./agents.js";
import { analysisContract } from "./analysis.js";
import { concurrencyContract } from "./concurrency.js";
import { graphContract } from "./graph.js";
import type { ContractOptions, StoreFactory } from "./harness.js";
import { memoryLearningContract } from "./memory-learning.js";
import { readyClaimsContract } from "./ready-claims.js";
import { recordsContract } from "./records.js";
import { referenceContract } from "./reference.js";
import { sessionRaceContract } from "./session-races.js";
import { taskContract } from "./tasks.js";
import { transactionContract } from "./transactions.js";

export type { ContractOptions, StoreFactory, StoreUnderTest } from "./harness.js";

/**
 * The whole store contract: every TaskStore implementation must pass all of it. Entry files
 * (test/store/contract-*.test.ts) call this with a factory for their store.
 */
export function storeContract(factory: StoreFactory, options: ContractOptions): void {
  transactionContract(factory);
  taskContract(factory);
  graphContract(factory);
  readyClaimsContract(factory);
  recordsContract(factory);
  agentContract(factory);
  memoryLearningContract(factory);
  analysisContract(factory);
  referenceContract(factory);
  concurrencyContract(factory, options);
  sessionRaceContract(factory);
}
