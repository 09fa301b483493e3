import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * A private certificate authority, as an organisation runs one, and a certificate it signed for
 * `names` (127.0.0.1 and localhost), made with openssl in `dir`. `ca` is the authority's certificate only:
 * what a client is given to trust; `cert` and `key` are what `arbeit serve --tls-cert/--tls-key` serve.
 */
export function privateCa(
  dir: string,
  name = "ca",
  names = "IP:127.0.0.1,DNS:localhost",
): { ca: string; cert: string; key: string } {
  const ca = join(dir, `${name}.pem`);
  const caKey = join(dir, `${name}-key.pem`);
  const cert = join(dir, `${name}-service.pem`);
  const key = join(dir, `${name}-service-key.pem`);
  const request = join(dir, `${name}-service.csr`);
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  const run = (args: string[]) => execFileSync("openssl", args, { stdio: "ignore" });
  run(["req", "-x509", ...ec, "-keyout", caKey, "-out", ca, "-days", "2", "-subj", `/CN=Test ${name} CA`]);
  run(["req", "-new", ...ec, "-keyout", key, "-out", request, "-subj", "/CN=localhost"]);
  const extensions = join(dir, `${name}-service.ext`);
  writeFileSync(extensions, `subjectAltName=${names}\n`);
  run([
    ...["x509", "-req", "-in", request, "-CA", ca, "-CAkey", caKey, "-CAcreateserial"],
    ...["-out", cert, "-days", "2", "-extfile", extensions],
  ]);
  return { ca, cert, key };
}
