import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, onSignedOut } from './api.js';
import { closeEvents } from './events.js';
import { SignIn } from './pages/sign_in.jsx';
import { Sandboxes } from './pages/sandboxes.jsx';
import { Sandbox } from './pages/sandbox.jsx';
import { Images, Jobs, Keys, Secrets, Storage } from './pages/resources.jsx';
import { Account } from './pages/account.jsx';
import { Objects } from './pages/objects.jsx';
import { Automations } from './pages/automations.jsx';
import { Apps } from './pages/apps.jsx';
import { Database } from './pages/database.jsx';
import { Sites } from './pages/sites.jsx';

const PAGES = [
  ['sandboxes', 'Sandboxes'], ['images', 'Images'], ['storage', 'Storage'], ['objects', 'Objects'],
  ['sites', 'Sites'],
  ['secrets', 'Secrets'],
  ['jobs', 'Jobs'], ['automations', 'Automations'], ['apps', 'Apps'], ['database', 'Database'], ['keys', 'API keys'], ['account', 'Account'],
];

// #/ is the sandboxes table, #/sandboxes/<id> one sandbox, #/<page> the others.
function route() {
  const m = /^#\/sandboxes\/([A-Za-z0-9_]+)$/.exec(location.hash);
  if (m) return { page: 'sandbox', id: m[1] };
  const page = location.hash.replace(/^#\//, '');
  return { page: PAGES.some(([p]) => p === page) ? page : 'sandboxes' };
}

function Page({ where, session }) {
  switch (where.page) {
    case 'sandbox': return <Sandbox id={where.id} key={where.id} />;
    case 'images': return <Images />;
    case 'storage': return <Storage />;
    case 'objects': return <Objects />;
    case 'sites': return <Sites />;
    case 'secrets': return <Secrets />;
    case 'jobs': return <Jobs />;
    case 'automations': return <Automations />;
    case 'apps': return <Apps />;
    case 'database': return <Database />;
    case 'keys': return <Keys orgId={session.orgId} />;
    case 'account': return <Account />;
    default: return <Sandboxes />;
  }
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
        <nav aria-label="Main">
          {PAGES.map(([page, title]) => (
            <a href={page === 'sandboxes' ? '#/' : `#/${page}`}
              aria-current={where.page === page || (page === 'sandboxes' && where.page === 'sandbox') ? 'page' : undefined}>
              {title}
            </a>
          ))}
        </nav>
        <span class="org mono" title="Organization">{session.orgId}</span>
        <button onClick={signOut}>Sign out</button>
      </header>
      <Page where={where} session={session} />
    </>
  );
}

render(<App />, document.getElementById('app'));
