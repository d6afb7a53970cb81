// Reads a request body with a size limit. Hand-written because the webhook needs the exact raw bytes
// (signature over the bytes, before any parsing) and every JSON body needs the same 1 MiB limit → 413.
import type { IncomingMessage } from "node:http";
import type { ParameterizedContext } from "koa";
import { AppError, badRequest } from "../../errors/app-error.js";

export const REST_BODY_LIMIT = 1024 * 1024;

export async function readRawBody(req: IncomingMessage, limit = REST_BODY_LIMIT): Promise<Buffer> {
  const declared = Number(req.headers["content-length"] ?? "0");
  if (declared > limit) {
    req.resume();
    throw new AppError("payload_too_large", `request body is larger than ${limit} bytes`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      req.resume();
      throw new AppError("payload_too_large", `request body is larger than ${limit} bytes`);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

const JSON_TYPE = /^application\/([a-z.+-]*\+)?json\b/i;

/**
 * A body must say it is JSON (spec: Content-Type is required for POST and PUT, application/json); a
 * missing type is refused like a wrong one rather than guessed. The body is read as sent: one in a
 * content coding (gzip, br, …) is refused too, rather than parsed as if it were plain (a gzip body would
 * fail as "not valid JSON", a plain body labelled br would be taken).
 */
export function assertJsonContentType(ctx: ParameterizedContext): void {
  const encoding = ctx.get("content-encoding").trim();
  if (encoding !== "" && encoding.toLowerCase() !== "identity") {
    const message = `Content-Encoding ${encoding} is not supported; send the body uncompressed`;
    throw badRequest(message, [{ path: "body", message }]);
  }
  const type = ctx.get("content-type");
  if (JSON_TYPE.test(type)) return;
  const message = type ? "Content-Type must be application/json" : "Content-Type is missing; it must be application/json";
  throw badRequest(message, [{ path: "body", message }]);
}

export async function readJsonBody(ctx: ParameterizedContext): Promise<unknown> {
  const raw = await readRawBody(ctx.req);
  if (raw.length === 0) throw badRequest("request body is required (JSON)", [{ path: "body", message: "required" }]);
  assertJsonContentType(ctx);
  try {
    return JSON.parse(raw.toString("utf8"));
  } catch {
    throw badRequest("request body is not valid JSON", [{ path: "body", message: "not valid JSON" }]);
  }
}
