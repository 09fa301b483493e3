import type { Server } from "node:http";
import type { Server as TlsServer } from "node:https";
import type { AddressInfo } from "node:net";

/** Listens on `host:port` (0: any free port) and resolves to the port taken, or rejects (EADDRINUSE, say). */
export function listen(server: Server | TlsServer, port: number, host: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}
