// Turns a FakeReply into bytes on the wire, applying the script's delay, comments, CRLF, stream
// errors, truncation and TCP write splitting.
import type { ServerResponse } from "node:http";
import type { FakeReply } from "./reply.js";
import type { FakeScript } from "./types.js";

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function write(res: ServerResponse, data: Buffer | string): Promise<void> {
  return new Promise((resolve, reject) => {
    res.write(data, (err) => (err ? reject(err) : resolve()));
  });
}

/** The stream items after the script's error/truncation/comment/CRLF rules. */
function streamPieces(reply: Extract<FakeReply, { kind: "stream" }>, script: FakeScript): { pieces: string[]; abrupt: boolean } {
  let pieces = [...reply.pieces];
  let abrupt = false;
  if (script.streamError) {
    pieces = [...pieces.slice(0, script.streamError.afterEvents), reply.errorEvent(script.streamError.message ?? "Internal server error")];
  } else if (script.truncate) {
    pieces = pieces.slice(0, script.truncate.afterEvents);
    abrupt = script.truncate.abrupt === true;
  }
  if (reply.sse && script.comments) {
    const keepAlive = reply.keepAlive ?? ": ping\n\n";
    pieces = pieces.flatMap((p) => [keepAlive, p]);
  }
  if (reply.sse && script.crlf) pieces = pieces.map((p) => p.replace(/\r?\n/g, "\r\n"));
  return { pieces, abrupt };
}

export async function sendReply(res: ServerResponse, reply: FakeReply, script: FakeScript): Promise<void> {
  if (script.delayMs) await sleep(script.delayMs);
  if (reply.kind === "json") {
    const body = Buffer.from(JSON.stringify(reply.body));
    res.writeHead(reply.status, {
      "content-type": "application/json",
      ...reply.headers,
      "content-length": String(body.length),
    });
    res.end(body);
    return;
  }
  res.socket?.setNoDelay(true);
  res.writeHead(reply.status, { connection: "keep-alive", ...reply.headers });
  res.flushHeaders();
  const { pieces, abrupt } = streamPieces(reply, script);
  const split = script.split ?? "event";
  if (split === "event") {
    for (const piece of pieces) {
      await write(res, piece);
      if (script.eventDelayMs) await sleep(script.eventDelayMs);
      else await tick();
    }
  } else {
    const all = Buffer.from(pieces.join(""));
    const size = split === "byte" ? 1 : split === "coalesce" ? Math.max(1, all.length) : Math.max(1, Math.floor(split));
    for (let i = 0; i < all.length; i += size) {
      await write(res, all.subarray(i, i + size));
      await tick();
    }
  }
  if (abrupt) {
    await tick();
    res.socket?.destroy();
    return;
  }
  res.end();
}
