// A provider's native stream as the fake providers send it, for the stream observers' tests: fetched
// whole, split into its events, and read back through an observer (whole or cut).
import { nativeRequest, rawRequest, type FakeProviders } from "../../../../test/fakes/providers/index.js";
import type { ProviderName, ResponseFacts, StreamObserver } from "../types.js";

export interface FakeStream {
  /** Fetches the stream again (after `fake.script(...)`, say). */
  send(): Promise<string>;
  /** The stream's text, whole. */
  whole: string;
  /** Its events, each with its blank-line separator. */
  events: string[];
  /** What an observer reads of `raw`. */
  observe(raw: string): ResponseFacts;
}

export async function fakeStream(fake: FakeProviders, provider: ProviderName, observer: () => StreamObserver): Promise<FakeStream> {
  const req = nativeRequest(provider, { stream: true });
  const send = async () => (await rawRequest(fake.urls[provider] + req.path, { headers: req.headers, body: req.body })).text;
  const observe = (raw: string) => {
    const o = observer();
    o.push(new TextEncoder().encode(raw));
    return o.end();
  };
  const whole = await send();
  const sep = provider === "google" ? "\r\n\r\n" : "\n\n";
  const events = whole.split(sep).filter((e) => e !== "").map((e) => `${e}${sep}`);
  return { send, whole, events, observe };
}
