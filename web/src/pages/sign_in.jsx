import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorNote, Field } from '../components.jsx';

// Email and password (a user of the organization), or an API key; and, when adaptd runs with
// --allow-signup (GET /dashboard/signup says so), "Create an account".
export function SignIn({ onSignedIn, notice }) {
  const [mode, setMode] = useState('password'); // 'password' | 'key' | 'signup'
  const [allowSignup, setAllowSignup] = useState(false);
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [key, setKey] = useState('');
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    api('GET', '/dashboard/signup', undefined, { quiet401: true })
      .then((a) => setAllowSignup(a.allowSignup === true), () => setAllowSignup(false));
  }, []);

  function show(next) {
    setMode(next);
    setError(null);
  }

  async function submit(e) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const credentials = { email: email.trim(), password };
      // A new account, then the same sign-in as any user's.
      if (mode === 'signup') await api('POST', '/dashboard/signup', credentials, { quiet401: true });
      const body = mode === 'key' ? { apiKey: key.trim() } : credentials;
      onSignedIn(await api('POST', '/dashboard/session', body, { quiet401: true }));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  const signingUp = mode === 'signup';
  const title = signingUp ? 'Create an account' : 'Sign in';
  return (
    <main class="sign-in">
      <h1>adapt</h1>
      <form onSubmit={submit} aria-label={title}>
        <h2>{title}</h2>
        {notice && !signingUp && <p class="notice">{notice}</p>}
        {signingUp && (
          <p class="notice">A new organization, with you as its owner. Until it is registered (the Account page's Register, or adapt account register) it can look but not make anything.</p>
        )}
        {mode === 'key' ? (
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
            <Field label="Password" id="password" hint={signingUp ? 'At least 10 characters.' : undefined}>
              <input id="password" type="password" value={password} required minLength={signingUp ? 10 : undefined}
                autocomplete={signingUp ? 'new-password' : 'current-password'}
                onInput={(e) => setPassword(e.currentTarget.value)} />
            </Field>
          </>
        )}
        <ErrorNote error={error} />
        <div class="actions">
          <button type="submit" class="primary" disabled={busy}>{signingUp ? 'Create account' : 'Sign in'}</button>
          {mode !== 'signup' && (
            <button type="button" class="link" onClick={() => show(mode === 'key' ? 'password' : 'key')}>
              {mode === 'key' ? 'Use email and password' : 'Use an API key'}
            </button>
          )}
          {allowSignup && (
            <button type="button" class="link" onClick={() => show(signingUp ? 'password' : 'signup')}>
              {signingUp ? 'I have an account: sign in' : 'Create an account'}
            </button>
          )}
        </div>
      </form>
    </main>
  );
}
