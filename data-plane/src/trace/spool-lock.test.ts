// The spool's LOCK against real processes (Linux /proc): a LOCK left by a crash must not block a restart
// when its pid now names a zombie or an unrelated process (pid reuse), and a live holder still locks the
// spool out, in the LOCK format with start time and boot id and in the older pid-only one.
import test from "ava";
import { existsSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { DurableSpool, SpoolLockedError } from "./spool.js";
import { logSink, tmp } from "./testing/spool-fixtures.js";

// Start times, zombies and boot ids are read from /proc; elsewhere the lock is kill(pid, 0) only.
const linux = existsSync("/proc/self/stat") ? test : test.skip;

/** State (field 3) and start time (field 22) of a process, read here independently of the code under test. */
function stat(pid: number | "self"): { state: string; startTime: string } {
  const text = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return { state: fields[0]!, startTime: fields[19]! };
}

const bootId = () => readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();

async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 10));
}

function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.includes("\n")) resolve(out.split("\n")[0]!);
    });
    child.once("exit", (c) => reject(new Error(`child exited with ${c}`)));
  });
}

/**
 * A `sleep 30` whose parent never reaps it: the shell starts it in the background and then execs into
 * another sleep, which never calls wait(). `zombify` kills it, leaving a zombie with the same pid.
 */
async function unreapedChild(t: { teardown(fn: () => void): void }): Promise<{ pid: number; zombify(): Promise<void> }> {
  const sh = spawn("sh", ["-c", "sleep 30 & echo $!; exec sleep 30"], { stdio: ["ignore", "pipe", "ignore"] });
  t.teardown(() => sh.kill("SIGKILL")); // the zombie goes to init, which reaps it
  const pid = Number(await firstLine(sh));
  await until(() => readFileSync(`/proc/${sh.pid}/comm`, "utf8").trim() === "sleep"); // the shell has exec'd
  return {
    pid,
    async zombify() {
      process.kill(pid, "SIGKILL");
      await until(() => stat(pid).state === "Z");
    },
  };
}

function sleeper(t: { teardown(fn: () => void): void }, command = "sleep"): ChildProcess {
  const child = spawn(command, ["30"], { stdio: "ignore" });
  t.teardown(() => child.kill("SIGKILL"));
  return child;
}

const lockOf = (dir: string) => join(dir, "LOCK");
const newFormat = (pid: number, startTime: string, boot: string) => `${JSON.stringify({ pid, startTime, bootId: boot })}\n`;

function spoolDir(t: { teardown(fn: () => void): void }): string {
  const dir = tmp();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

linux("a LOCK naming a zombie is stale, in either format: the spool opens", async (t) => {
  const dir = spoolDir(t);
  const child = await unreapedChild(t);
  await child.zombify();

  writeFileSync(lockOf(dir), `${child.pid}\n`);
  const a = await DurableSpool.open({ dir, log: logSink().log });
  await a.close();

  // Even when the LOCK's start time is the zombie's own.
  writeFileSync(lockOf(dir), newFormat(child.pid, stat(child.pid).startTime, bootId()));
  const b = await DurableSpool.open({ dir, log: logSink().log });
  await b.close();
  t.pass();
});

linux("a LOCK naming a live process that started at another time, or in another boot, is stale: it is replaced by one naming this process", async (t) => {
  const dir = spoolDir(t);
  const other = sleeper(t);
  await until(() => existsSync(`/proc/${other.pid}/stat`));
  const real = stat(other.pid!).startTime;

  writeFileSync(lockOf(dir), newFormat(other.pid!, String(BigInt(real) + 12345n), bootId())); // the pid was reused
  const a = await DurableSpool.open({ dir, log: logSink().log });
  t.deepEqual(JSON.parse(readFileSync(lockOf(dir), "utf8")), { pid: process.pid, startTime: stat("self").startTime, bootId: bootId() });
  await a.close();
  t.false(existsSync(lockOf(dir)), "released at close");

  writeFileSync(lockOf(dir), newFormat(other.pid!, real, "00000000-0000-0000-0000-000000000000")); // written before a reboot
  const b = await DurableSpool.open({ dir, log: logSink().log });
  t.is((JSON.parse(readFileSync(lockOf(dir), "utf8")) as { pid: number }).pid, process.pid);
  await b.close();
});

linux("a LOCK naming a live process with its real start time still locks the spool out", async (t) => {
  const dir = spoolDir(t);
  const holder = sleeper(t);
  await until(() => existsSync(`/proc/${holder.pid}/stat`));
  const lock = newFormat(holder.pid!, stat(holder.pid!).startTime, bootId());
  writeFileSync(lockOf(dir), lock);
  const err = await t.throwsAsync(DurableSpool.open({ dir, log: logSink().log }), { instanceOf: SpoolLockedError });
  t.is(err?.pid, holder.pid!);
  t.is(readFileSync(lockOf(dir), "utf8"), lock, "the holder's LOCK is left as it was");
});

linux("a holder whose command name holds ') Z ' is read right: alive, not a zombie", async (t) => {
  const dir = spoolDir(t);
  // comm is the executable's file name: a parser that splits at the first ')' would read state "Z".
  const bin = join(spoolDir(t), "s) Z 1 (x");
  symlinkSync(execFileSync("sh", ["-c", "command -v sleep"], { encoding: "utf8" }).trim(), bin);
  const holder = sleeper(t, bin);
  await until(() => existsSync(`/proc/${holder.pid}/comm`) && readFileSync(`/proc/${holder.pid}/comm`, "utf8").trim() === "s) Z 1 (x");
  writeFileSync(lockOf(dir), newFormat(holder.pid!, stat(holder.pid!).startTime, bootId()));
  await t.throwsAsync(DurableSpool.open({ dir, log: logSink().log }), { instanceOf: SpoolLockedError });
});

linux("a LOCK in the pid-only format still locks the spool out while its process runs, and not once it is a zombie", async (t) => {
  const dir = spoolDir(t);
  const child = await unreapedChild(t);
  writeFileSync(lockOf(dir), `${child.pid}\n`);
  await t.throwsAsync(DurableSpool.open({ dir, log: logSink().log }), { instanceOf: SpoolLockedError });
  t.is(readFileSync(lockOf(dir), "utf8"), `${child.pid}\n`, "the holder's LOCK is left as it was");

  await child.zombify(); // it crashed; its parent has not reaped it yet
  const s = await DurableSpool.open({ dir, log: logSink().log });
  t.is((JSON.parse(readFileSync(lockOf(dir), "utf8")) as { pid: number }).pid, process.pid);
  await s.close();
});
