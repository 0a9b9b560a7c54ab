import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, sandboxPath } from '../api.js';
import { watchEvents } from '../events.js';
import { age, displayName, memory, STATUSES, ttlLeft } from '../format.js';
import { Empty, ErrorNote, StatusBadge } from '../components.jsx';
import { CreateSandbox } from './create_sandbox.jsx';

async function listAll() {
  const items = [];
  let cursor = null;
  for (let page = 0; page < 10; page++) {
    const q = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
    const list = await api('GET', `/v1/sandboxes?limit=100${q}`);
    items.push(...list.items);
    cursor = list.nextCursor;
    if (!cursor) break;
  }
  return items;
}

function matches(sandbox, text, status) {
  if (status && sandbox.status !== status) return false;
  const t = text.trim().toLowerCase();
  if (!t) return true;
  if (sandbox.id.startsWith(t)) return true;
  return Object.entries(sandbox.labels || {}).some(([k, v]) =>
    `${k}=${v}`.toLowerCase().includes(t));
}

// Starts or stops a sandbox, or deletes it once confirmed.
function RowActions({ sandbox, onError }) {
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const cancel = useRef(null);
  // The confirmation takes the focus, so Enter or Escape answers it from the keyboard.
  useLayoutEffect(() => { if (confirming && cancel.current) cancel.current.focus(); }, [confirming]);
  const act = async (method, suffix) => {
    setBusy(true);
    try {
      await api(method, sandboxPath(sandbox.id) + suffix);
    } catch (err) {
      onError(err);
    } finally {
      setBusy(false);
      setConfirming(false);
    }
  };
  const label = displayName(sandbox) || sandbox.id;
  if (confirming) {
    return (
      <span class="confirm" role="group" aria-label={`Delete ${label}?`}
        onKeyDown={(e) => { if (e.key === 'Escape') setConfirming(false); }}>
        <span>Delete?</span>
        <button class="danger" disabled={busy} onClick={() => act('DELETE', '')}>Confirm delete</button>
        <button onClick={() => setConfirming(false)} ref={cancel}>Cancel</button>
      </span>
    );
  }
  return (
    <span class="row-actions">
      {sandbox.status === 'running' && (
        <button disabled={busy} onClick={() => act('POST', '/stop')} aria-label={`Stop ${label}`}>Stop</button>
      )}
      {sandbox.status === 'hibernated' && (
        <button disabled={busy} onClick={() => act('POST', '/start')} aria-label={`Start ${label}`}>Start</button>
      )}
      {sandbox.status !== 'deleting' && (
        <button class="danger" onClick={() => setConfirming(true)} aria-label={`Delete ${label}`}>Delete</button>
      )}
    </span>
  );
}

export function Sandboxes() {
  const [items, setItems] = useState(null);
  const [error, setError] = useState(null);
  const [text, setText] = useState('');
  const [status, setStatus] = useState('');
  const [creating, setCreating] = useState(false);
  const [, setTick] = useState(0);

  const upsert = (sandbox) =>
    setItems((old) => {
      const rest = (old || []).filter((s) => s.id !== sandbox.id);
      if (sandbox.status === 'deleted') return rest;
      return [sandbox, ...rest].sort((a, b) => b.createdAt.localeCompare(a.createdAt));
    });
  const remove = (id) => setItems((old) => (old || []).filter((s) => s.id !== id));

  useEffect(() => {
    const reload = () => listAll().then(setItems, setError);
    reload();
    const stop = watchEvents((kind, event) => {
      if (kind === 'open' || kind === 'reset') {
        reload();
      } else if (kind !== 'status') {
        // not a sandbox's change
      } else if (event.status === 'deleted') {
        remove(event.sandboxId);
      } else {
        api('GET', sandboxPath(event.sandboxId)).then(upsert, (err) => {
          if (err.status === 404) remove(event.sandboxId);
        });
      }
    });
    // Ages and time left move with the clock, not with the server.
    const clock = setInterval(() => setTick((t) => t + 1), 15000);
    return () => { stop(); clearInterval(clock); };
  }, []);

  const shown = useMemo(() => (items || []).filter((s) => matches(s, text, status)),
    [items, text, status]);

  return (
    <main>
      <div class="toolbar">
        <h1>Sandboxes</h1>
        <button class="primary" onClick={() => setCreating(true)} disabled={creating}>New sandbox</button>
      </div>
      {creating && (
        <CreateSandbox onCancel={() => setCreating(false)}
          onCreated={(s) => { setCreating(false); upsert(s); }} />
      )}
      <div class="filters" role="search">
        <label for="filter-text">Filter</label>
        <input id="filter-text" type="search" placeholder="name, label or ID" value={text}
          onInput={(e) => setText(e.currentTarget.value)} />
        <label for="filter-status">Status</label>
        <select id="filter-status" value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
          <option value="">all</option>
          {STATUSES.map((s) => <option value={s}>{s}</option>)}
        </select>
      </div>
      <ErrorNote error={error} />
      {items === null && !error && <p class="empty">Loading…</p>}
      {items !== null && items.length === 0 && (
        <Empty>No sandboxes yet. Create one with New sandbox, or with adapt sandbox create.</Empty>
      )}
      {items !== null && items.length > 0 && shown.length === 0 && (
        <Empty>No sandbox matches this filter.</Empty>
      )}
      {shown.length > 0 && (
        <div class="table-wrap">
          <table class="sandboxes">
            <thead>
              <tr>
                <th>Name</th><th>ID</th><th>Status</th><th>Image</th><th>CPU / memory</th>
                <th>Age</th><th>TTL left</th><th>Labels</th><th><span class="sr-only">Actions</span></th>
              </tr>
            </thead>
            <tbody>
              {shown.map((s) => (
                <tr key={s.id} data-id={s.id}>
                  <td data-label="Name"><a href={`#/sandboxes/${s.id}`}>{displayName(s) || '(unnamed)'}</a></td>
                  <td data-label="ID" class="mono">{s.id}</td>
                  <td data-label="Status"><StatusBadge status={s.status} /></td>
                  <td data-label="Image" class="mono">{s.image}</td>
                  <td data-label="CPU / memory">{s.cpu} CPU / {memory(s.memoryMiB)}</td>
                  <td data-label="Age">{age(s.createdAt)}</td>
                  <td data-label="TTL left">{ttlLeft(s)}</td>
                  <td data-label="Labels" class="labels">
                    {Object.entries(s.labels || {}).filter(([k]) => k !== 'name').map(([k, v]) => (
                      <span class="label" key={k}>{k}={v}</span>
                    ))}
                  </td>
                  <td><RowActions sandbox={s} onError={setError} /></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </main>
  );
}
