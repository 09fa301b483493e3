import { serviceTarget } from "../remote/target.js";
import type { ArbeitService } from "../service/arbeit-service.js";
import { isNoUsableStore, type LocateOptions, locate, openProject } from "../service/project.js";

/**
 * The project's service for a long-lived host process, opened on first use and kept open. A
 * failed open (most often NOT_INITIALIZED) is not remembered, so arbeit_init later just works.
 */
export class ProjectHandle {
  readonly #where: LocateOptions;
  #service: Promise<ArbeitService> | undefined;

  constructor(where: LocateOptions) {
    this.#where = where;
  }

  get where(): LocateOptions {
    return this.#where;
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
   * For hooks: the service, or undefined when this process has no store it can use here (Arbeit
   * is not set up, or the process uses an Arbeit service): hooks stay silent then.
   */
  async serviceIfInitialized(): Promise<ArbeitService | undefined> {
    if (!this.#service && !locate(this.#where)) return undefined;
    // Not through a service yet: a process pointed at one (ARBEIT_URL) does not use a local store.
    if (serviceTarget(this.#where)) return undefined;
    try {
      return await this.service();
    } catch (error) {
      if (isNoUsableStore(error)) return undefined;
      throw error;
    }
  }

  async close(): Promise<void> {
    const opened = this.#service;
    this.#service = undefined;
    if (opened) await (await opened.catch(() => undefined))?.close();
  }
}
