// The sidecar asks providers for identity encoding (decisions.md 11); an upstream that compresses
// anyway is decoded here, so usage, tools and policies still see the answer, and the client gets the
// decoded bytes (without Content-Encoding). Unknown encodings are passed through untouched.
import type { Readable, Transform } from "node:stream";
import { brotliDecompressSync, createBrotliDecompress, createGunzip, createInflate, gunzipSync, inflateSync } from "node:zlib";

type Encoding = "gzip" | "deflate" | "br";

/** The encoding the sidecar can decode, undefined for none/identity/unknown. */
export function decodableEncoding(header: string | string[] | undefined): Encoding | undefined {
  if (header === undefined) return undefined;
  const v = (Array.isArray(header) ? header.join(",") : header).trim().toLowerCase();
  if (v === "gzip" || v === "x-gzip") return "gzip";
  if (v === "deflate") return "deflate";
  if (v === "br") return "br";
  return undefined;
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
