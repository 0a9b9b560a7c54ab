// Lists: `?limit=&cursor=` pages of `{"items": [...], "nextCursor": ...}` as one async iterator.
import type { Page } from "./models.js";
import type { Query, Transport } from "./transport.js";

/** Yields every item, fetching the next page only when the caller reaches it. */
export async function* paginate<T>(t: Transport, path: string, pageSize = 50, query: Query = {}): AsyncGenerator<T> {
  let cursor: string | null = null;
  for (;;) {
    const page: Page<T> = await t.call<Page<T>>("GET", path, { query: { ...query, limit: pageSize, cursor } });
    for (const item of page.items) yield item;
    cursor = page.nextCursor;
    if (!cursor) return;
  }
}

/** Every item of an iterator of pages, as one array (lists that are short by nature). */
export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}
