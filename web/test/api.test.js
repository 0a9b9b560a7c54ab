// The dashboard's API client (web/src/api.js) over a scripted fetch: a read whose connection
// fails without an answer is sent once more, a write never is, and a second failure or an
// error answer reaches the page as the API's sentence. Run: node --test web/test
import { test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { api, ApiError } from '../src/api.js';

const realFetch = globalThis.fetch;
afterEach(() => { globalThis.fetch = realFetch; });

// Each call takes the next outcome: an Error is thrown, anything else is answered as JSON.
function script(...outcomes) {
  const calls = [];
  globalThis.fetch = async (path, init) => {
    calls.push({ path, method: init.method });
    const next = outcomes.shift();
    if (next instanceof Error) throw next;
    return new Response(JSON.stringify(next.body), {
      status: next.status, headers: { 'content-type': 'application/json' },
    });
  };
  return calls;
}

test('a read whose connection failed is sent once more', async () => {
  const calls = script(new TypeError('Failed to fetch'), { status: 200, body: { orgId: 'org_1' } });
  assert.deepEqual(await api('GET', '/v1/account'), { orgId: 'org_1' });
  assert.equal(calls.length, 2);
});

test('a read that fails twice says adaptd could not be reached', async () => {
  const calls = script(new TypeError('reset'), new TypeError('refused'));
  await assert.rejects(api('GET', '/v1/account'), (e) => e instanceof ApiError && e.code === 'unreachable' && /refused/.test(e.message));
  assert.equal(calls.length, 2);
});

test('a write is never sent twice', async () => {
  const calls = script(new TypeError('reset'), { status: 201, body: {} });
  await assert.rejects(api('POST', '/v1/sandboxes', {}), (e) => e.code === 'unreachable');
  assert.equal(calls.length, 1);
});

test('an error answer is not retried and carries the API sentence', async () => {
  const calls = script({ status: 503, body: { error: { code: 'unavailable', message: 'busy, try again' } } });
  await assert.rejects(api('GET', '/v1/account'), (e) => e.status === 503 && e.message === 'busy, try again');
  assert.equal(calls.length, 1);
});

test('listAll follows nextCursor and joins the pages', async () => {
  const { listAll } = await import('../src/api.js');
  const calls = script(
    { status: 200, body: { items: [{ id: 'b' }], commonPrefixes: ['d/'], nextCursor: 'c2' } },
    { status: 200, body: { items: [{ id: 'a' }], commonPrefixes: [], nextCursor: null } });
  const all = await listAll('/v1/objects?delimiter=/');
  assert.deepEqual(all.items.map((x) => x.id), ['b', 'a']);
  assert.deepEqual(all.commonPrefixes, ['d/']);
  assert.deepEqual(calls.map((c) => c.path), ['/v1/objects?delimiter=/', '/v1/objects?delimiter=/&cursor=c2']);
});
