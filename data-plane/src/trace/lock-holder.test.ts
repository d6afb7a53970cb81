// The LOCK file's pieces without processes: /proc/<pid>/stat parsing, both LOCK formats, and the guard
// that keeps a sidecar from deleting a LOCK another one wrote after this one judged the old LOCK stale.
import test from "ava";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { formatHolder, parseHolder, parseProcStat, readLock, releaseLockFile, removeIfUnchanged, takeLockFile } from "./lock-holder.js";
import { tmp } from "./testing/spool-fixtures.js";

const STAT_TAIL = "S 1 1 1 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 7659221 3133440 383 18446744073709551615 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0";

test("/proc/<pid>/stat: state and start time are read after the last ')', whatever the command name holds", (t) => {
  t.deepEqual(parseProcStat(`42 (sleep) ${STAT_TAIL}\n`), { state: "S", startTime: "7659221" });
  t.deepEqual(parseProcStat(`42 (a) Z 1 (b c) ${STAT_TAIL}\n`), { state: "S", startTime: "7659221" });
  t.deepEqual(parseProcStat(`42 ()) ${STAT_TAIL.replace(/^S/, "Z")}`), { state: "Z", startTime: "7659221" });
  t.is(parseProcStat("42 (sleep"), undefined);
  t.is(parseProcStat("42 (sleep) S 1 2"), undefined, "too few fields");
});

test("a LOCK is read in both formats; one naming no pid names no holder", (t) => {
  t.deepEqual(parseHolder("1234\n"), { pid: 1234 }, "the pid-only format");
  const h = { pid: 7, startTime: "99", bootId: "b-1" };
  t.deepEqual(parseHolder(formatHolder(h)), h);
  t.deepEqual(parseHolder('{"pid":7}'), { pid: 7 });
  for (const bad of ["", "0", "-3", "1.5", "abc", "{", '{"pid":"7"}', '{"pid":0}', "null", "[]"]) t.is(parseHolder(bad), undefined, bad);
});

test("a stale LOCK is removed only if it is still the one judged stale", (t) => {
  const dir = tmp();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, "LOCK");

  writeFileSync(path, "999999999\n");
  const judged = readLock(path)!;
  removeIfUnchanged(path, judged);
  t.deepEqual(readdirSync(dir), [], "unchanged: removed, nothing left beside it");

  writeFileSync(path, "999999999\n");
  const judgedAgain = readLock(path)!;
  // Meanwhile another sidecar removed it and took the lock: its LOCK must survive.
  rmSync(path);
  writeFileSync(path, formatHolder({ pid: 1, startTime: "5" }));
  removeIfUnchanged(path, judgedAgain);
  t.deepEqual(parseHolder(readFileSync(path, "utf8")), { pid: 1, startTime: "5" });
  t.deepEqual(readdirSync(dir), ["LOCK"]);
});

test("the lock is taken over a stale LOCK, released only by its holder, and leaves no other file", (t) => {
  const dir = tmp();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, "LOCK");
  writeFileSync(path, "999999999\n");
  t.is(takeLockFile(path), undefined);
  t.is(parseHolder(readFileSync(path, "utf8"))?.pid, process.pid);
  t.deepEqual(readdirSync(dir), ["LOCK"]);
  releaseLockFile(path);
  t.deepEqual(readdirSync(dir), []);

  writeFileSync(path, "999999999\n");
  releaseLockFile(path);
  t.deepEqual(readdirSync(dir), ["LOCK"], "another process's LOCK is not released");
});
