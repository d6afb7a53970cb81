// Page walkers: cursor pagination (group A: cursor → next_cursor while has_more), offset pagination
// (group B: offset += items until total) and the keyset walk of /api/traces. Each yields pages;
// AgentGov.paginate flattens them.

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

/** The offset the caller asked the walk to start at (0 when none or not a number). */
const startOffset = (query: Record<string, unknown>): number => (typeof query.offset === "number" ? query.offset : Number(query.offset ?? 0) || 0);

export async function* offsetPages<T>(fetchPage: FetchPage, query: Record<string, unknown> = {}): AsyncGenerator<Page<T>, void, undefined> {
  let offset = startOffset(query);
  for (;;) {
    const body = (await fetchPage({ ...query, offset })) as OffsetBody;
    yield { items: body.data as T[], body };
    offset += body.data.length;
    // An empty page ends the walk even if total says otherwise (rows deleted meanwhile).
    if (body.data.length === 0 || offset >= body.total) return;
  }
}

interface TraceItem {
  id: string;
  createdAt: string;
}

/**
 * /api/traces, newest first (createdAt, then id, descending), walked by keyset: each page asks for
 * `endDate` = the last item's createdAt (inclusive), skipping the items at that time already yielded.
 * Traces reach the store some time after their createdAt (the sidecar uploads in batches), so an offset
 * walk saw older traces land among the pages already read and shift the rest (items twice, others
 * never). Here a trace that lands older than the walk's position is still ahead of it and is yielded; one
 * newer than the position is behind it (as in a cursor walk). The first page has no end unless the
 * caller set one, so the walk starts at the server's newest trace, whatever the client's clock.
 */
export async function* traceKeysetPages<T>(fetchPage: FetchPage, query: Record<string, unknown> = {}): AsyncGenerator<Page<T>, void, undefined> {
  let end = typeof query.endDate === "string" ? query.endDate : undefined;
  let offset = startOffset(query);
  /** Ids yielded at exactly `end`: a trace landing at that millisecond can shift them by one. */
  let atEnd = new Set<string>();
  for (;;) {
    const body = (await fetchPage(end === undefined ? { ...query, offset } : { ...query, endDate: end, offset })) as OffsetBody;
    const items = (body.data as TraceItem[]).filter((item) => !atEnd.has(item.id));
    yield { items: items as T[], body };
    if (body.data.length === 0 || offset + body.data.length >= body.total) return;
    const last = body.data[body.data.length - 1] as TraceItem;
    if (last.createdAt !== end) {
      end = last.createdAt;
      atEnd = new Set();
      offset = 0;
    }
    for (const item of body.data as TraceItem[]) if (item.createdAt === end && !atEnd.has(item.id)) atEnd.add(item.id);
    offset = atEnd.size;
  }
}
