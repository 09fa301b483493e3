import { localRunner, remoteRunner, type StepRunner } from "../remote/steps.js";
import { type ServiceTarget, serviceTarget } from "../remote/target.js";
import type { ArbeitService } from "../service/arbeit-service.js";
import type { Caller } from "../service/caller.js";
import { isNoUsableStore, type LocateOptions, locate, openProject } from "../service/project.js";

/**
 * The project's store for a long-lived host process, opened on first use and kept open; or, in
 * a checkout that uses an `arbeit serve` service (or a process given ARBEIT_URL), that service.
 * A failed open (most often NOT_INITIALIZED) is not remembered, so arbeit_init later just works.
 */
export class ProjectHandle {
  readonly #where: LocateOptions;
  readonly #base: Pick<Caller, "agent" | "list_id">;
  readonly #env: NodeJS.ProcessEnv;
  #service: Promise<ArbeitService> | undefined;

  /**
   * `base`: who the hooks' steps act as on a local store, unless a step names its agent. `env`:
   * where ARBEIT_URL and ARBEIT_TOKEN are read.
   */
  constructor(
    where: LocateOptions,
    base: Pick<Caller, "agent" | "list_id"> = { agent: null },
    env: NodeJS.ProcessEnv = process.env,
  ) {
    this.#where = where;
    this.#base = base;
    this.#env = env;
  }

  get env(): NodeJS.ProcessEnv {
    return this.#env;
  }

  get where(): LocateOptions {
    return this.#where;
  }

  /** The service this process sends its calls to, if any; read each time, as arbeit_init may run in between. */
  remote(): ServiceTarget | undefined {
    return serviceTarget(this.#where, this.#env);
  }

  service(): Promise<ArbeitService> {
    if (!this.#service) {
      const opening = openProject(this.#where);
      this.#service = opening;
      opening.catch(() => {
        if (this.#service === opening) this.#service = undefined;
      });
    }
    return this.#service;
  }

  /**
   * For hooks: how to run their store steps here (on the service, or on the local store), or
   * undefined when this process has no store it can use (Arbeit is not set up): hooks stay
   * silent then.
   */
  async steps(): Promise<StepRunner | undefined> {
    const remote = this.remote();
    if (remote) return remoteRunner(remote, this.#env, this.#base.list_id);
    if (!this.#service && !locate(this.#where)) return undefined;
    let service: ArbeitService;
    try {
      service = await this.service();
    } catch (error) {
      if (isNoUsableStore(error)) return undefined;
      throw error;
    }
    return localRunner(async () => service, this.#base);
  }

  async close(): Promise<void> {
    const opened = this.#service;
    this.#service = undefined;
    if (opened) await (await opened.catch(() => undefined))?.close();
  }
}
