// Takes out of an OpenAI chat stream what the sidecar's `stream_options.include_usage` added to it
// (OPENAI_STREAM_USAGE=add; the client did not ask for usage): the last chunk, which carries the usage
// and `choices: []` (code that reads `chunk.choices[0]` breaks on it), and the `"usage": null` member
// of every other chunk. The client receives the stream it asked for; the stream observer, which reads the
// upstream bytes before this filter, gets the provider's usage for the trace and the budget.
//
// Works on whole SSE events (a partial event is held until its blank line, as the outbound governor
// holds one: a client cannot use half an event). An event it does not change is written as received.
import { SseBlockSplitter, rebuildBlock, type SseBlock } from "../policy/stream/sse-blocks.js";
import { stringifyKeepingNumbers } from "../providers/json-keeping-numbers.js";

/** What the option adds to every chunk but the usage one, where OpenAI puts it: last. */
const NULL_USAGE_LAST = ',"usage":null}';

export class AddedUsageFilter {
  private readonly decoder = new TextDecoder("utf-8");
  private readonly splitter = new SseBlockSplitter();

  /** The bytes to send for this upstream chunk: its completed events, changed where needed. */
  transform(chunk: Uint8Array): Buffer {
    return this.write(this.splitter.push(this.decoder.decode(chunk, { stream: true })));
  }

  /** What is still held when the upstream stream ended (a cut last event is sent as it came). */
  end(): Buffer {
    const blocks = this.splitter.push(this.decoder.decode());
    const last = this.splitter.end();
    if (last) blocks.push(last);
    return this.write(blocks);
  }

  private write(blocks: SseBlock[]): Buffer {
    if (blocks.length === 0) return EMPTY;
    let out = "";
    for (const block of blocks) out += filtered(block);
    return Buffer.from(out, "utf8");
  }
}

const EMPTY = Buffer.alloc(0);

/** The block as the client would have received it without include_usage. */
function filtered(block: SseBlock): string {
  const data = block.data;
  // Comments, [DONE] and anything without the member pass as they came.
  if (data === null || !data.includes('"usage"')) return block.raw;
  if (data.endsWith(NULL_USAGE_LAST)) return rebuildBlock(block, data.slice(0, -NULL_USAGE_LAST.length) + "}");
  let chunk: unknown;
  try {
    chunk = JSON.parse(data);
  } catch {
    return block.raw; // not JSON: not a chunk the option made
  }
  if (typeof chunk !== "object" || chunk === null || Array.isArray(chunk) || !("usage" in chunk)) return block.raw;
  const { usage, ...rest } = chunk as Record<string, unknown>;
  const choices = rest.choices;
  // The chunk the option added: usage and no choices. Dropped whole.
  if (usage !== null && Array.isArray(choices) && choices.length === 0) return "";
  // "usage": null elsewhere than last (another member after it): the chunk without it, re-serialised.
  if (usage === null) return rebuildBlock(block, stringifyKeepingNumbers(rest, data));
  return block.raw;
}
