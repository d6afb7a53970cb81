// The sidecar asks providers for identity encoding (decisions.md 11); an upstream that compresses
// anyway is decoded here, so usage, tools and policies still see the answer, and the client gets the
// decoded bytes (without Content-Encoding). Unknown encodings are passed through untouched where no policy
// must read the answer, refused (502 unreadable_answer) where one must.
import type { Readable, Transform } from "node:stream";
import { brotliDecompressSync, createBrotliDecompress, createGunzip, createInflate, gunzipSync, inflateSync } from "node:zlib";

type Encoding = "gzip" | "deflate" | "br";

/** The codings a Content-Encoding field lists, lower-case, in order, `identity` (no coding) left out. */
function codings(header: string | string[] | undefined): string[] {
  if (header === undefined) return [];
  return (Array.isArray(header) ? header.join(",") : header)
    .split(",")
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== "" && c !== "identity");
}

/** The encoding the sidecar can decode, undefined for none/identity/unknown (one coding; `identity` beside it ignored). */
export function decodableEncoding(header: string | string[] | undefined): Encoding | undefined {
  const list = codings(header);
  if (list.length !== 1) return undefined;
  const v = list[0];
  if (v === "gzip" || v === "x-gzip") return "gzip";
  if (v === "deflate") return "deflate";
  if (v === "br") return "br";
  return undefined;
}

/** The body is in a coding the sidecar cannot undo (zstd, several codings): its text cannot be read. */
export function undecodableEncoding(header: string | string[] | undefined): boolean {
  return codings(header).length > 0 && decodableEncoding(header) === undefined;
}

export function decodeSync(bytes: Buffer, encoding: Encoding): Buffer {
  if (encoding === "gzip") return gunzipSync(bytes);
  if (encoding === "deflate") return inflateSync(bytes);
  return brotliDecompressSync(bytes);
}

/** The body decoded as a stream (errors of either side end the iteration with that error). */
export function decodeStream(body: Readable, encoding: Encoding): AsyncIterable<Buffer> {
  const decoder: Transform = encoding === "gzip" ? createGunzip() : encoding === "deflate" ? createInflate() : createBrotliDecompress();
  body.on("error", (e) => decoder.destroy(e));
  return body.pipe(decoder);
}
