// The dashboard's one way to the API: same origin, the session cookie, and the header the API
// asks of cookie requests that change something (X-Adapt-CSRF). Errors arrive as the API's
// sentence (API.md's error format) in an ApiError.

export class ApiError extends Error {
  constructor(status, code, message, field) {
    super(message);
    this.status = status;
    this.code = code;
    this.field = field;
  }
}

let signedOut = () => {};

// `handler` runs when the API answers 401: the session expired or was revoked.
export function onSignedOut(handler) {
  signedOut = handler;
}

// `headers`: more request headers (If-Match).
export async function api(method, path, body, { quiet401 = false, headers: extra = {} } = {}) {
  const headers = { ...extra, 'X-Adapt-CSRF': '1' };
  let payload;
  if (body instanceof Blob) {
    payload = body;
    headers['Content-Type'] = 'application/octet-stream';
  } else if (body !== undefined) {
    payload = JSON.stringify(body);
    headers['Content-Type'] = 'application/json';
  }
  const send = () => fetch(path, { method, headers, body: payload, credentials: 'same-origin' });
  let res;
  try {
    res = await send();
  } catch (e) {
    // A read is sent once more: a connection the server closed as the browser took it (idle
    // too long, a restart) fails the request without any answer. A write is not: it may have
    // been done.
    if (method !== 'GET') throw new ApiError(0, 'unreachable', 'adaptd could not be reached: ' + e.message);
    try {
      res = await send();
    } catch (again) {
      throw new ApiError(0, 'unreachable', 'adaptd could not be reached: ' + again.message);
    }
  }
  if (res.status === 401 && !quiet401) signedOut();
  if (!res.ok) {
    let error = {};
    try {
      error = (await res.json()).error || {};
    } catch (e) {
      // not the API's error format: the status says enough
    }
    throw new ApiError(res.status, error.code, error.message || `HTTP ${res.status}`, error.field);
  }
  if (res.status === 204) return null;
  const type = res.headers.get('content-type') || '';
  return type.includes('json') ? res.json() : res.text();
}

export const sandboxPath = (id) => `/v1/sandboxes/${encodeURIComponent(id)}`;

// Every item of a list (API.md: {"items": [...], "nextCursor": ...}, newest first), following
// nextCursor for at most `maxPages` pages: the last page's answer with every page's `items`
// (and object storage's `commonPrefixes`) joined.
export async function listAll(path, maxPages = 10) {
  const items = [];
  const commonPrefixes = [];
  let cursor = null;
  let page = {};
  for (let i = 0; i < maxPages; i++) {
    const sep = path.includes('?') ? '&' : '?';
    page = await api('GET', cursor ? `${path}${sep}cursor=${encodeURIComponent(cursor)}` : path);
    items.push(...(page.items || []));
    commonPrefixes.push(...(page.commonPrefixes || []));
    cursor = page.nextCursor;
    if (!cursor) break;
  }
  return { ...page, items, commonPrefixes };
}
