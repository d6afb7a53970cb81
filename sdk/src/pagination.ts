// Page walkers: cursor pagination (group A: cursor → next_cursor while has_more) and offset
// pagination (group B: offset += items until total). Each yields pages; AgentGov.paginate flattens them.

export interface Page<T> {
  items: T[];
  /** The page body as received ({data, has_more, next_cursor} or {data, total, limit, offset}). */
  body: unknown;
}

type FetchPage = (query: Record<string, unknown>) => Promise<unknown>;

interface CursorBody {
  data: unknown[];
  has_more: boolean;
  next_cursor?: string;
}
interface OffsetBody {
  data: unknown[];
  total: number;
}

export async function* cursorPages<T>(fetchPage: FetchPage, query: Record<string, unknown> = {}): AsyncGenerator<Page<T>, void, undefined> {
  let cursor = typeof query.cursor === "string" ? query.cursor : undefined;
  const seen = new Set<string>();
  for (;;) {
    // The filters and the page size go with every page (the server does not carry them in the cursor).
    const body = (await fetchPage(cursor === undefined ? { ...query } : { ...query, cursor })) as CursorBody;
    yield { items: body.data as T[], body };
    if (!body.has_more || !body.next_cursor) return;
    // A server that hands out the same cursor twice would loop forever; stop instead.
    if (seen.has(body.next_cursor)) throw new Error(`pagination: the server returned cursor ${body.next_cursor} twice`);
    seen.add(body.next_cursor);
    cursor = body.next_cursor;
  }
}

export async function* offsetPages<T>(fetchPage: FetchPage, query: Record<string, unknown> = {}): AsyncGenerator<Page<T>, void, undefined> {
  let offset = typeof query.offset === "number" ? query.offset : Number(query.offset ?? 0) || 0;
  for (;;) {
    const body = (await fetchPage({ ...query, offset })) as OffsetBody;
    yield { items: body.data as T[], body };
    offset += body.data.length;
    // An empty page ends the walk even if total says otherwise (rows deleted meanwhile).
    if (body.data.length === 0 || offset >= body.total) return;
  }
}
