import assert from "node:assert/strict";
import { hostname } from "node:os";
import { describe, it } from "node:test";
import { allowedHosts } from "../../src/ui/server/security.js";

describe("the Host names a dashboard answers to", () => {
  it("on loopback: its port under 127.0.0.1, localhost and [::1], nothing else", () => {
    assert.deepEqual([...allowedHosts("127.0.0.1", 7341)].sort(), ["127.0.0.1:7341", "[::1]:7341", "localhost:7341"]);
  });

  it("on the scheme's default port: also each name without the port, as browsers send Host and Origin", () => {
    const http = allowedHosts("127.0.0.1", 80);
    for (const name of ["127.0.0.1", "127.0.0.1:80", "localhost", "[::1]"]) assert.ok(http.has(name), name);
    assert.ok(!allowedHosts("127.0.0.1", 8080).has("127.0.0.1"), "elsewhere the port is required");
    assert.ok(allowedHosts("127.0.0.1", 443, "https").has("localhost"));
    assert.ok(!allowedHosts("127.0.0.1", 443).has("localhost"), "443 is not http's default port");
  });

  it("on an IPv6 address: the address in brackets, as browsers send it", () => {
    assert.ok(allowedHosts("fd00::5", 80).has("[fd00::5]:80"));
  });

  it("on every interface: also the machine's name and its own addresses, never a stranger's name", () => {
    const hosts = allowedHosts("0.0.0.0", 8080);
    assert.ok(hosts.has(`${hostname().toLowerCase()}:8080`));
    assert.ok(hosts.has("127.0.0.1:8080"));
    assert.ok(!hosts.has("attacker.example:8080"));
  });
});
