import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorNote, Field } from '../components.jsx';

// Email and password (a user of the organization), or an API key.
export function SignIn({ onSignedIn, notice }) {
  const [useKey, setUseKey] = useState(false);
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [key, setKey] = useState('');
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);

  async function submit(e) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const body = useKey ? { apiKey: key.trim() } : { email: email.trim(), password };
      onSignedIn(await api('POST', '/dashboard/session', body, { quiet401: true }));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <main class="sign-in">
      <h1>adapt</h1>
      <form onSubmit={submit} aria-label="Sign in">
        <h2>Sign in</h2>
        {notice && <p class="notice">{notice}</p>}
        {useKey ? (
          <Field label="API key" id="api-key">
            <input id="api-key" type="password" autocomplete="off" value={key} required
              onInput={(e) => setKey(e.currentTarget.value)} />
          </Field>
        ) : (
          <>
            <Field label="Email" id="email">
              <input id="email" type="email" autocomplete="username" value={email} required
                onInput={(e) => setEmail(e.currentTarget.value)} />
            </Field>
            <Field label="Password" id="password">
              <input id="password" type="password" autocomplete="current-password" value={password}
                required onInput={(e) => setPassword(e.currentTarget.value)} />
            </Field>
          </>
        )}
        <ErrorNote error={error} />
        <div class="actions">
          <button type="submit" class="primary" disabled={busy}>Sign in</button>
          <button type="button" class="link" onClick={() => { setUseKey(!useKey); setError(null); }}>
            {useKey ? 'Use email and password' : 'Use an API key'}
          </button>
        </div>
      </form>
    </main>
  );
}
