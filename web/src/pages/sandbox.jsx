import { useEffect, useRef, useState } from 'preact/hooks';
import { api, sandboxPath } from '../api.js';
import { bytes, displayName, memory, ttlLeft, when } from '../format.js';
import { Empty, ErrorNote, StatusBadge } from '../components.jsx';
import { StatsCharts } from './stats_charts.jsx';
import { Startup } from './startup_output.jsx';

// Runs a shell command and follows its output as it comes (the command's SSE stream).
function RunCommand({ id, disabled }) {
  const [command, setCommand] = useState('');
  const [run, setRun] = useState(null);
  const [error, setError] = useState(null);
  const source = useRef(null);
  useEffect(() => () => source.current && source.current.close(), []);

  async function submit(e) {
    e.preventDefault();
    setError(null);
    if (source.current) source.current.close();
    try {
      const started = await api('POST', `${sandboxPath(id)}/commands`, { command, waitSeconds: 0 });
      const state = { id: started.id, stdout: '', stderr: '', result: null };
      setRun({ ...state });
      const stream = new EventSource(`${sandboxPath(id)}/commands/${encodeURIComponent(started.id)}/stream`);
      source.current = stream;
      const append = (kind) => (ev) => {
        state[kind] += JSON.parse(ev.data).data;
        setRun({ ...state });
      };
      stream.addEventListener('stdout', append('stdout'));
      stream.addEventListener('stderr', append('stderr'));
      stream.addEventListener('result', (ev) => {
        state.result = JSON.parse(ev.data);
        setRun({ ...state });
        stream.close();
      });
      stream.addEventListener('error', () => {
        if (!state.result) stream.close();
      });
    } catch (err) {
      setError(err);
    }
  }

  return (
    <form onSubmit={submit} aria-label="Run a command">
      <div class="inline">
        <label for="run-command" class="sr-only">Command</label>
        <input id="run-command" class="mono" placeholder="ls -la /" value={command} required
          onInput={(e) => setCommand(e.currentTarget.value)} disabled={disabled} />
        <button type="submit" class="primary" disabled={disabled}>Run</button>
      </div>
      <ErrorNote error={error} />
      {run && (
        <div class="command-run" data-command={run.id}>
          <p>
            {run.result
              ? `Exit code ${run.result.exitCode ?? '—'} (${run.result.status})`
              : 'Running…'}
          </p>
          <pre class="output" data-stream="stdout">{run.stdout}</pre>
          {run.stderr && <pre class="output stderr" data-stream="stderr">{run.stderr}</pre>}
        </div>
      )}
    </form>
  );
}

function joinPath(dir, name) {
  return dir.endsWith('/') ? dir + name : `${dir}/${name}`;
}

// A directory's entries, with download links and an upload.
function Files({ id, running }) {
  const [dir, setDir] = useState('/tmp');
  const [typed, setTyped] = useState('/tmp');
  const [list, setList] = useState(null);
  const [error, setError] = useState(null);
  const [note, setNote] = useState('');
  const [newDir, setNewDir] = useState('');
  const upload = useRef(null);
  const files = (path, q) => `${sandboxPath(id)}/files?path=${encodeURIComponent(path)}${q}`;

  const load = (path) => {
    setError(null);
    api('GET', files(path, '&list=1')).then((l) => { setList(l); setDir(path); setTyped(path); }, setError);
  };
  useEffect(() => { if (running) load(dir); }, [running]);

  async function send(e) {
    e.preventDefault();
    const file = upload.current.files[0];
    if (!file) return;
    setNote('');
    try {
      await api('PUT', files(joinPath(dir, file.name), ''), file);
      setNote(`Uploaded ${file.name}.`);
      upload.current.value = '';
      load(dir);
    } catch (err) {
      setError(err);
    }
  }

  async function mkdir(e) {
    e.preventDefault();
    setError(null);
    try {
      await api('POST', `${sandboxPath(id)}/files/mkdir`, { path: joinPath(dir, newDir) });
      setNote(`Created ${newDir}/.`);
      setNewDir('');
      load(dir);
    } catch (err) {
      setError(err);
    }
  }

  async function remove(entry) {
    const path = joinPath(dir, entry.name);
    const tree = entry.type === 'dir';
    if (!confirm(tree ? `Delete the directory ${path} and everything in it?` : `Delete ${path}?`)) return;
    setError(null);
    try {
      await api('DELETE', files(path, tree ? '&recursive=1' : ''));
      setNote(`Deleted ${entry.name}.`);
      load(dir);
    } catch (err) {
      // Already gone (another process removed it, or a retried request did): what was wanted,
      // as with `rm -f`; the listing is read again either way.
      if (err.status === 404) setNote(`Deleted ${entry.name}.`);
      else setError(err);
      load(dir);
    }
  }

  if (!running) return <Empty>Files can be read while the sandbox is running.</Empty>;
  return (
    <div>
      <form class="inline" onSubmit={(e) => { e.preventDefault(); load(typed); }} aria-label="Open a directory">
        <label for="files-path" class="sr-only">Directory</label>
        <input id="files-path" class="mono" value={typed} onInput={(e) => setTyped(e.currentTarget.value)} />
        <button type="submit">Open</button>
        {dir !== '/' && <button type="button" onClick={() => load(dir.replace(/\/[^/]*\/?$/, '') || '/')}>Up</button>}
      </form>
      <ErrorNote error={error} />
      {list && list.items.length === 0 && <Empty>This directory is empty.</Empty>}
      {list && list.items.length > 0 && (
        <div class="table-wrap">
          <table class="files">
            <thead><tr><th>Name</th><th>Size</th><th>Mode</th><th>Modified</th><th><span class="sr-only">Actions</span></th></tr></thead>
            <tbody>
              {list.items.map((f) => (
                <tr key={f.name}>
                  <td data-label="Name">
                    {f.type === 'dir'
                      ? <button class="link" onClick={() => load(joinPath(dir, f.name))}>{f.name}/</button>
                      : f.type === 'file'
                        ? <a href={files(joinPath(dir, f.name), '')} download={f.name}>{f.name}</a>
                        : <span>{f.name}</span>}
                  </td>
                  <td data-label="Size">{f.type === 'file' ? bytes(f.size) : ''}</td>
                  <td data-label="Mode" class="mono">{f.mode}</td>
                  <td data-label="Modified">{when(f.mtime)}</td>
                  <td>
                    <button class="danger" onClick={() => remove(f)} aria-label={`Delete ${f.name}`}>Delete</button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <form class="inline" onSubmit={mkdir} aria-label="Create a directory">
        <label for="new-dir">New directory in {dir}</label>
        <input id="new-dir" class="mono" value={newDir} required onInput={(e) => setNewDir(e.currentTarget.value)} />
        <button type="submit">Create directory</button>
      </form>
      <form class="inline" onSubmit={send} aria-label="Upload a file">
        <label for="upload-file">Upload to {dir}</label>
        <input id="upload-file" type="file" ref={upload} />
        <button type="submit">Upload</button>
      </form>
      {note && <p class="notice" role="status">{note}</p>}
    </div>
  );
}

function Endpoints({ endpoints }) {
  if (!endpoints || endpoints.length === 0) return <Empty>No endpoints. Expose a port with adapt endpoint create.</Empty>;
  return (
    <ul class="plain">
      {endpoints.map((e) => (
        <li key={e.id}>
          port {e.port}: <a href={e.url} rel="noreferrer" target="_blank">{e.url}</a>
          {e.httpUrl && e.httpUrl !== e.url && <> (<a href={e.httpUrl} rel="noreferrer" target="_blank">{e.httpUrl}</a>)</>}
        </li>
      ))}
    </ul>
  );
}

// The sandbox's status changes, oldest first: its own event stream replays them from the
// start, then follows; each one also reloads the record (startup result included; its output
// streams meanwhile: startup_output.jsx).
function useSandboxEvents(id, onEvent) {
  const [events, setEvents] = useState([]);
  useEffect(() => {
    setEvents([]);
    const source = new EventSource(`${sandboxPath(id)}/events`);
    source.addEventListener('status', (e) => {
      try {
        const event = JSON.parse(e.data);
        setEvents((old) => [...old, event]);
        onEvent(event);
      } catch (err) {
        // not ours
      }
    });
    return () => source.close();
  }, [id]);
  return events;
}

export function Sandbox({ id }) {
  const [sandbox, setSandbox] = useState(null);
  const [error, setError] = useState(null);
  const load = () => api('GET', sandboxPath(id)).then(setSandbox, setError);
  useEffect(() => { load(); }, [id]);
  const events = useSandboxEvents(id, load);

  if (error && !sandbox) return <main><a href="#/">← Sandboxes</a><ErrorNote error={error} /></main>;
  if (!sandbox) return <main><p class="empty">Loading…</p></main>;
  const s = sandbox;
  const running = s.status === 'running';
  const net = s.network || {};
  return (
    <main>
      <a href="#/">← Sandboxes</a>
      <div class="toolbar">
        <h1>{displayName(s) || s.id}</h1>
        <StatusBadge status={s.status} />
      </div>
      {s.status === 'deleted' && <p class="notice">This sandbox was deleted; its record stays for inspection.</p>}
      <section aria-labelledby="record-h">
        <h2 id="record-h">Sandbox</h2>
        <dl class="facts">
          <dt>ID</dt><dd class="mono">{s.id}</dd>
          <dt>Image</dt><dd class="mono">{s.image}</dd>
          <dt>Resources</dt><dd>{s.cpu} CPU, {memory(s.memoryMiB)} memory, {memory(s.diskMiB)} disk</dd>
          <dt>Created</dt><dd>{when(s.createdAt)}</dd>
          <dt>Expires</dt><dd>{s.expiresAt ? `${when(s.expiresAt)} (${ttlLeft(s)} left)` : 'no expiry'}</dd>
          <dt>Network</dt>
          <dd>
            {{ open: 'Public internet', none: 'Disabled', allowlist: 'Restricted destinations' }[net.egress] || net.egress}
            {(net.allow || []).map((r) => <span class="label mono">{`${r.protocol} ${r.address} ${r.port}`}</span>)}
            {(net.hostnames || []).map((r) => <span class="label mono">{`${r.hostname} ${r.port}`}</span>)}
            {net.egress === 'allowlist' && (net.dns ? ` DNS through ${net.dns}` : ' DNS disabled')}
          </dd>
          <dt>Security profile</dt><dd>{s.securityProfile}</dd>
          <dt>Startup class</dt><dd>{s.startupClass}{s.storage ? ` (storage ${s.storage})` : ''}</dd>
          <dt>Labels</dt>
          <dd class="labels">{Object.entries(s.labels || {}).map(([k, v]) => <span class="label" key={k}>{k}={v}</span>)}</dd>
          {s.terminationReason && <><dt>Ended</dt><dd>{s.terminationReason}</dd></>}
          {s.error && <><dt>Error</dt><dd>{s.error}</dd></>}
        </dl>
      </section>
      {running && (
        <section aria-labelledby="stats-h">
          <h2 id="stats-h">CPU and memory</h2>
          <StatsCharts id={s.id} />
        </section>
      )}
      <section aria-labelledby="startup-h">
        <h2 id="startup-h">Startup</h2>
        <Startup sandbox={s} />
      </section>
      <section aria-labelledby="run-h">
        <h2 id="run-h">Run a command</h2>
        {!running && <p class="notice">Commands run while the sandbox is running.</p>}
        <RunCommand id={s.id} disabled={!running} />
      </section>
      <section aria-labelledby="endpoints-h">
        <h2 id="endpoints-h">Endpoints</h2>
        <Endpoints endpoints={s.endpoints} />
      </section>
      <section aria-labelledby="events-h">
        <h2 id="events-h">Events</h2>
        {events.length === 0 ? <Empty>No status changes yet.</Empty> : (
          <ol class="timeline">
            {events.map((e) => (
              <li><StatusBadge status={e.status} /> <time dateTime={e.at}>{when(e.at)}</time></li>
            ))}
          </ol>
        )}
      </section>
      <section aria-labelledby="files-h">
        <h2 id="files-h">Files</h2>
        <Files id={s.id} running={running} />
      </section>
    </main>
  );
}
