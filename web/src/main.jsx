import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, onSignedOut } from './api.js';
import { closeEvents } from './events.js';
import { SignIn } from './pages/sign_in.jsx';
import { Sandboxes } from './pages/sandboxes.jsx';
import { Sandbox } from './pages/sandbox.jsx';

// #/ is the sandboxes table, #/sandboxes/<id> one sandbox.
function route() {
  const m = /^#\/sandboxes\/([A-Za-z0-9_]+)$/.exec(location.hash);
  return m ? { page: 'sandbox', id: m[1] } : { page: 'sandboxes' };
}

function App() {
  const [session, setSession] = useState(undefined);
  const [notice, setNotice] = useState('');
  const [where, setWhere] = useState(route());

  useEffect(() => {
    onSignedOut(() => {
      closeEvents();
      setNotice('Your session ended. Sign in again.');
      setSession(null);
    });
    api('GET', '/dashboard/session', undefined, { quiet401: true }).then(setSession, () => setSession(null));
    const onHash = () => setWhere(route());
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);

  async function signOut() {
    try {
      await api('DELETE', '/dashboard/session', undefined, { quiet401: true });
    } finally {
      closeEvents();
      setNotice('Signed out.');
      setSession(null);
    }
  }

  if (session === undefined) return <p class="empty">Loading…</p>;
  if (session === null) {
    return <SignIn notice={notice} onSignedIn={(s) => { setNotice(''); setSession(s); }} />;
  }
  return (
    <>
      <header class="top">
        <a href="#/" class="brand">adapt</a>
        <nav aria-label="Main"><a href="#/" aria-current={where.page === 'sandboxes' ? 'page' : undefined}>Sandboxes</a></nav>
        <span class="org mono" title="Organization">{session.orgId}</span>
        <button onClick={signOut}>Sign out</button>
      </header>
      {where.page === 'sandbox' ? <Sandbox id={where.id} key={where.id} /> : <Sandboxes />}
    </>
  );
}

render(<App />, document.getElementById('app'));
