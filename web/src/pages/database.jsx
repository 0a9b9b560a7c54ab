import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { bytes, when } from '../format.js';
import { ErrorNote, StatusBadge } from '../components.jsx';

// The organization's PostgreSQL database: its status, size of its quota and connections of
// its limit; create it, or give its owner role a new password. Host and password never come
// here: sandboxes created with the database option get them.
export function Database() {
  const [db, setDb] = useState(null);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState('');
  useEffect(() => { api('GET', '/v1/database').then(setDb, setError); }, []);
  async function act(path, done) {
    setBusy(true);
    setError(null);
    try {
      setDb(await api('POST', path));
      setNotice(done);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }
  const rotate = () => {
    if (!confirm('Give the database a new password? Sandboxes created from now on get it; running ones keep the old one until it fails.')) return;
    act('/v1/database/rotate', 'The password was changed. Sandboxes created from now on get the new one.');
  };
  return (
    <main>
      <h1>Database</h1>
      <ErrorNote error={error} />
      {notice && <p class="notice" role="status">{notice}</p>}
      {!db && !error && <p class="empty">Loading…</p>}
      {db && db.status === 'not_created' && (
        <div class="empty">
          <p>This organization has no database yet. One PostgreSQL database, reachable from its sandboxes only.</p>
          <button class="primary" disabled={busy} onClick={() => act('/v1/database', 'The database was created.')}>Create database</button>
        </div>
      )}
      {db && db.status !== 'not_created' && (
        <>
          <dl class="facts">
            <dt>Status</dt><dd><StatusBadge status={db.status} /></dd>
            <dt>PostgreSQL</dt><dd>{db.postgresVersion || '—'}</dd>
            <dt>Size</dt><dd>{bytes(db.sizeBytes)} of {bytes(db.quotaBytes)}</dd>
            <dt>Connections</dt><dd>{db.connections} of {db.connectionLimit}</dd>
            <dt>Created</dt><dd>{when(db.createdAt)}</dd>
          </dl>
          <p class="notice">Create a sandbox with the database option to connect: it gets the address and password in its environment.</p>
          <button disabled={busy || db.status !== 'ready'} onClick={rotate}>Rotate password</button>
        </>
      )}
    </main>
  );
}
