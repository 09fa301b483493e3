import type { DriverMode, SqlDriver } from "./driver.js";

declare const Bun: unknown;

/** Opens `path` with the driver of the runtime we are in; only that driver's module is loaded. */
export async function openDriver(path: string, mode: DriverMode = {}): Promise<SqlDriver> {
  if (typeof Bun !== "undefined") {
    const { openBunDriver } = await import("./driver-bun.js");
    return openBunDriver(path, mode);
  }
  const { openNodeDriver } = await import("./driver-node.js");
  return openNodeDriver(path, mode);
}
