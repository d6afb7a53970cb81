// Reads a proxy request body into one Buffer, refusing (413) a body over the limit as soon as its
// declared length or the bytes received exceed it; a client that goes away mid-body rejects the read.
import type { IncomingMessage } from "node:http";
import { ProxyRefusal } from "./outcomes.js";

/** Proxy request bodies over 10 MiB are refused with 413 (DESIGN.md §4). */
export const PROXY_BODY_LIMIT = 10 * 1024 * 1024;

const tooLarge = () => new ProxyRefusal(413, "payload_too_large", `request body is larger than ${PROXY_BODY_LIMIT} bytes`);

/** Thrown when the client closed the connection before its body was complete (nothing to answer). */
export class ClientGoneError extends Error {
  constructor() {
    super("client closed the connection before the request body was complete");
    this.name = "ClientGoneError";
  }
}

export function readBody(req: IncomingMessage, limit = PROXY_BODY_LIMIT): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = req.headers["content-length"];
    if (declared !== undefined && Number(declared) > limit) {
      req.resume();
      reject(tooLarge());
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const onData = (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        settled = true;
        req.off("data", onData);
        req.resume(); // drain and drop the rest so the 413 can be answered on this connection
        reject(tooLarge());
        return;
      }
      chunks.push(c);
    };
    req.on("data", onData);
    req.once("end", () => {
      if (settled) return;
      settled = true;
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    });
    req.once("error", (e) => {
      if (settled) return;
      settled = true;
      reject(e);
    });
    req.once("close", () => {
      if (settled) return;
      settled = true;
      reject(new ClientGoneError());
    });
  });
}
