import { credentialsFile, forgetToken, originOf } from "../remote/credentials.js";
import { serviceUrl } from "../remote/service-url.js";
import { failure } from "../tools/envelope.js";
import type { GlobalOptions } from "./global-options.js";
import { maintenanceArgs } from "./maintenance-args.js";
import { printEnvelope, wantsJson, write } from "./output.js";

const USAGE = `Usage: arbeit logout <url>

Forgets the token \`arbeit login\` stored for the Arbeit service at <url>. The token itself stays
valid until the service's administrator revokes it (arbeit token revoke, docs/team.md).
`;

export async function run(argv: string[], options: GlobalOptions): Promise<number> {
  if (options.help) {
    write(1, USAGE);
    return 0;
  }
  const { positionals } = maintenanceArgs(argv, { flags: [], positionals: { min: 1, max: 1 } }, USAGE);
  try {
    const url = serviceUrl(positionals[0]!, "The service URL");
    const forgotten = forgetToken(url);
    return printEnvelope(
      { success: true, data: { service: originOf(url), forgotten, file: credentialsFile() } },
      wantsJson(options.json),
    );
  } catch (error) {
    return printEnvelope(failure(error), wantsJson(options.json));
  }
}
