// ip_address precision in developer text (Python slices, version numbers) without losing real addresses.

import test from "ava";
import { detectPii } from "./detect-pii.js";

function ips(text: string): string[] {
  return detectPii(text, { types: ["ip_address"] }).map((f) => text.slice(f.start, f.end));
}

test("Python slices are not IPv6 addresses", (t) => {
  for (const text of ["evens = xs[::2]", "odds = xs[1::2]", "m[:, ::3]", "a[0::4]", "b[10::20]", 'print(f"{x[::2]}")  # step 2']) {
    t.deepEqual(ips(text), [], text);
  }
});

test("short IPv6 forms that are addresses stay found", (t) => {
  const cases: readonly [string, string][] = [
    ["curl http://[::1]:8080/", "::1"],
    ["listen on ::1", "::1"],
    ["ping fe80::1%eth0", "fe80::1"],
    ["mapped ::ffff:192.0.2.128", "::ffff:192.0.2.128"],
    ["gateway 2001:db8::1", "2001:db8::1"],
    ["ipv6 1::2", "1::2"], // short decimal groups with an address word
    ["route 2001:db8:abcd:12::/64", "2001:db8:abcd:12::/64"],
  ];
  for (const [text, value] of cases) t.deepEqual(ips(text), [value], text);
});

test("dotted-quad version numbers are not IPv4 addresses", (t) => {
  for (const text of [
    "User-Agent: Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36",
    "assemblyVersion 4.0.0.0",
    "[assembly: AssemblyFileVersion(\"4.0.0.0\")] fileVersion=1.2.3.4",
    "Bumped from 1.2.3.4 to 1.2.3.5",
    "Bumped the assembly from 1.2.3.4 to 1.2.3.5 in this PR.",
    "Upgrade from 2.0.0.0 to 3.0.0.0 failed",
    "numpy==1.26.4.0, foo>=2.0.0.1",
    "docker pull acme/api@1.2.3.4",
    "npm i @scope/pkg@1.2.3.4",
    "docker tag 1.4.3.4",
    "see section 1.2.3.4 of the RFC",
  ]) {
    t.deepEqual(ips(text), [], text);
  }
});

test("real IPv4 addresses stay found: URLs, ports, CIDR, X-Forwarded-For, ssh, filters, from/to", (t) => {
  const cases: readonly [string, string[]][] = [
    ["curl http://192.168.1.23:8080/health", ["192.168.1.23"]],
    ["X-Forwarded-For: 198.51.100.7, 10.0.0.5", ["198.51.100.7", "10.0.0.5"]],
    ["route 10.20.0.0/16 via 10.0.0.1", ["10.20.0.0/16", "10.0.0.1"]],
    ["ssh root@10.0.0.7", ["10.0.0.7"]],
    ["root@10.0.0.5:~# uptime", ["10.0.0.5"]], // a shell prompt, no login word
    ["deploy@172.16.4.20", ["172.16.4.20"]],
    ["wireshark filter ip.addr == 192.168.0.9", ["192.168.0.9"]],
    ["traffic from 203.0.113.4 to 203.0.113.9", ["203.0.113.4", "203.0.113.9"]],
    ['{"client_ip": "203.0.113.42"}', ["203.0.113.42"]],
    ["Upgraded the router firmware; its IP is now 192.168.0.254", ["192.168.0.254"]],
    ["build server 10.1.2.3 is down", ["10.1.2.3"]],
  ];
  for (const [text, values] of cases) t.deepEqual(ips(text), values, text);
});

test("'from' and 'client' no longer boost a dotted quad to 0.95", (t) => {
  for (const text of ["traffic from 203.0.113.4", "client 203.0.113.4"]) {
    const f = detectPii(text, { types: ["ip_address"] });
    t.is(f.length, 1, text);
    t.is(f[0]!.score, 0.6, text);
  }
  t.true(detectPii("client_ip 203.0.113.4", { types: ["ip_address"] })[0]!.score > 0.9);
});
