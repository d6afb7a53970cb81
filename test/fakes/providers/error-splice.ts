// Test helper: a fetch that returns the fake's stream cut after N events with extra bytes appended,
// i.e. what a client sees when a proxy ends a stream early with its own error event.
export function fetchWithAppendedEvent(extra: string): typeof fetch {
  return async (input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) => {
    const upstream = await fetch(input, init);
    const text = await upstream.text();
    const headers = new Headers();
    const type = upstream.headers.get("content-type");
    if (type) headers.set("content-type", type);
    return new Response(text + extra, { status: upstream.status, headers });
  };
}
