import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api.js';
import { watchEvents } from '../events.js';
import { bytes, when } from '../format.js';
import { ErrorNote, StatusBadge } from '../components.jsx';
import { ResourceList } from './resource_list.jsx';

const mono = (text) => <span class="mono">{text}</span>;
const appPath = (app, verb = '') => `/v1/apps/${encodeURIComponent(app.id)}${verb}`;

// The replica count as a small form: the API refuses what the limits refuse, in words.
function Scale({ app, onDone, onError }) {
  const [replicas, setReplicas] = useState(String(app.replicas));
  const [busy, setBusy] = useState(false);
  async function submit(e) {
    e.preventDefault();
    setBusy(true);
    try {
      await api('POST', appPath(app, '/scale'), { replicas: Number(replicas) });
      onDone();
    } catch (err) {
      // 404: the app was deleted while its scale ran (the scale answers once its replicas
      // went, which a deletion can overtake): there is nothing left to scale, and the list
      // shows it gone.
      if (err.status === 404) onDone();
      else onError(err);
    } finally {
      setBusy(false);
    }
  }
  const id = `replicas-${app.id}`;
  return (
    <form class="inline" onSubmit={submit}>
      <label for={id} class="visually-hidden">Replicas of {app.name}</label>
      <input id={id} type="number" min="0" max="10" value={replicas} size="3"
        onInput={(e) => setReplicas(e.currentTarget.value)} />
      <button type="submit" disabled={busy} aria-label={`Scale ${app.name}`}>Scale</button>
    </form>
  );
}

// One app's releases, newest first; Roll back deploys an older one again.
function Releases({ app, reloadKey, onRollback }) {
  return (
    <ResourceList title={`Releases of ${app.name}`} section reloadKey={reloadKey} path={appPath(app, '/releases')}
      empty="No releases."
      columns={[
        { label: 'Release', cell: (r) => mono(r.id) },
        { label: 'Start command', cell: (r) => mono(r.startCommand) },
        { label: 'Port', cell: (r) => r.port },
        { label: 'Size', cell: (r) => bytes(r.sizeBytes) },
        { label: 'Created', cell: (r) => when(r.createdAt) },
        {
          label: 'Actions', cell: (r) => (r.id === app.releaseId ? <StatusBadge status="current" /> : (
            <button onClick={() => onRollback(r)} aria-label={`Roll back to ${r.id}`}>Roll back</button>
          )),
        },
      ]} />
  );
}

// Deployed apps: their URL, replicas ready of wanted, scale, releases and roll back, delete.
// The list follows the organization's events (`event: app`: deployed, scaled, a replica ready
// or failed, deleted): each one reads the list again, and the shown app's releases, without a
// reload of the page; so does the stream opening (again) or a reset (list, then watch).
export function Apps() {
  const [error, setError] = useState(null);
  const [notice, setNotice] = useState('');
  const [reloadKey, setReloadKey] = useState(0);
  const [shown, setShown] = useState(null);
  const reload = () => setReloadKey((k) => k + 1);
  const shownNow = useRef(null);
  shownNow.current = shown;
  useEffect(() => watchEvents((kind, event) => {
    if (kind === 'open' || kind === 'reset') reload();
    if (kind !== 'app') return;
    const app = shownNow.current;
    if (!app || app.id !== event.appId) {
      reload();
      return;
    }
    // The shown app is read first: were its releases read again before a deletion is known,
    // they would answer 404 and the page would show that as an error.
    const stillShown = () => shownNow.current && shownNow.current.id === app.id;
    api('GET', appPath(app)).then((fresh) => { if (stillShown()) setShown(fresh); },
      (err) => { if (err.status === 404 && stillShown()) setShown(null); }).finally(reload);
  }), []);
  async function rollback(release) {
    setError(null);
    setNotice(`Rolling ${shown.name} back to ${release.id}…`);
    try {
      setShown(await api('POST', appPath(shown, '/rollback'), { releaseId: release.id }));
      setNotice(`${shown.name} runs ${release.id}.`);
      reload();
    } catch (err) {
      setNotice('');
      setError(err);
    }
  }
  async function remove(app) {
    if (!confirm(`Delete the app ${app.name}? Its replicas stop and its URL answers no more.`)) return;
    setError(null);
    if (shown && shown.id === app.id) setShown(null);
    try {
      await api('DELETE', appPath(app));
    } catch (err) {
      // 404: the app is gone already (deleted from elsewhere, or a request the browser sent
      // again after a dropped connection): what was asked for holds, so it is no error.
      if (err.status !== 404) setError(err);
    }
    reload();
  }
  return (
    <ResourceList title="Apps" path="/v1/apps" reloadKey={reloadKey}
      empty="No apps yet. Deploy one from a sandbox with adapt app deploy."
      after={shown && <Releases app={shown} key={shown.id + shown.releaseId} reloadKey={reloadKey} onRollback={rollback} />}
      columns={[
        { label: 'Name', cell: (a) => a.name },
        { label: 'URL', cell: (a) => <a class="mono" href={a.httpUrl || a.url} rel="noreferrer" target="_blank">{a.httpUrl || a.url}</a> },
        { label: 'Replicas', cell: (a) => `${a.readyReplicas} ready of ${a.replicas}` },
        { label: 'Release', cell: (a) => mono(a.releaseId || '—') },
        { label: 'Updated', cell: (a) => when(a.updatedAt) },
        { label: 'Scale', cell: (a) => <Scale app={a} key={`${a.id}-${a.replicas}`} onDone={reload} onError={setError} /> },
        {
          label: 'Actions', cell: (a) => (
            <span class="actions">
              <button onClick={() => setShown(a)} aria-label={`Releases of ${a.name}`}>Releases</button>
              <button class="danger" onClick={() => remove(a)} aria-label={`Delete ${a.name}`}>Delete</button>
            </span>
          ),
        },
      ]}>
      {notice && <p class="notice" role="status">{notice}</p>}
      <ErrorNote error={error} />
    </ResourceList>
  );
}
