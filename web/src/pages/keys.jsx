import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { when } from '../format.js';
import { ErrorNote, Field } from '../components.jsx';
import { ResourceList } from './resource_list.jsx';

const mono = (text) => <span class="mono">{text}</span>;
const DAY = 24 * 3600;
// The choices of the form's "Expires" (ttlSeconds; '' is never).
const EXPIRIES = [['', 'Never'], [String(DAY), 'In 1 day'], [String(7 * DAY), 'In 7 days'],
  [String(30 * DAY), 'In 30 days'], [String(90 * DAY), 'In 90 days'], [String(365 * DAY), 'In 1 year']];

// Copies `text`; the Clipboard API where the page may use it, else a selected input and the
// copy command.
async function copyText(text, input) {
  if (navigator.clipboard && window.isSecureContext) {
    await navigator.clipboard.writeText(text);
    return;
  }
  input.select();
  if (!document.execCommand('copy')) throw new Error('the browser did not copy; select the key and copy it');
}

// The key's text, shown this once: the API never answers it again.
function NewKey({ made, onDone }) {
  const [copied, setCopied] = useState('');
  let input = null;
  async function copy() {
    try {
      await copyText(made.key, input);
      setCopied('Copied.');
    } catch (err) {
      setCopied(`Not copied: ${err.message}`);
    }
  }
  return (
    <section class="panel" aria-label="New key">
      <h2>Key {made.name} made</h2>
      <p>Copy it now: it is shown only this once. Store it where your programs read secrets.</p>
      <div class="inline">
        <label class="visually-hidden" for="new-key">The new key</label>
        <input id="new-key" class="mono" readonly value={made.key} ref={(el) => { input = el; }}
          onFocus={(e) => e.currentTarget.select()} />
        <button type="button" class="primary" onClick={copy}>Copy</button>
        <button type="button" onClick={onDone}>Done</button>
      </div>
      <p role="status" class="notice">{copied}</p>
    </section>
  );
}

function CreateKey({ onMade }) {
  const [name, setName] = useState('');
  const [ttl, setTtl] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  async function submit(e) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const body = {};
      if (name.trim()) body.name = name.trim();
      if (ttl) body.ttlSeconds = Number(ttl);
      onMade(await api('POST', '/v1/keys', body));
      setName('');
      setTtl('');
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }
  return (
    <form class="row-form" onSubmit={submit} aria-label="Create a key">
      <Field label="Name" id="key-name" hint="To recognise it by, e.g. ci or laptop.">
        <input id="key-name" maxLength={63} value={name} placeholder="ci"
          onInput={(e) => setName(e.currentTarget.value)} />
      </Field>
      <Field label="Expires" id="key-expires">
        <select id="key-expires" value={ttl} onChange={(e) => setTtl(e.currentTarget.value)}>
          {EXPIRIES.map(([value, label]) => <option value={value}>{label}</option>)}
        </select>
      </Field>
      <button class="primary" type="submit" disabled={busy}>Create key</button>
      <ErrorNote error={error} />
    </form>
  );
}

// The organization's API keys: made here (the text shown once), listed by name and id,
// revoked after a confirmation. A key acts for this organization, never as the admin.
export function Keys() {
  const [error, setError] = useState(null);
  const [made, setMade] = useState(null);
  const [reloadKey, setReloadKey] = useState(0);
  const reload = () => setReloadKey((k) => k + 1);
  async function revoke(key) {
    const label = key.name || key.id;
    if (!confirm(`Revoke the key ${label}? Programs and sessions using it stop working at once.`)) return;
    setError(null);
    try {
      await api('DELETE', `/v1/keys/${encodeURIComponent(key.id)}`);
      reload();
    } catch (err) {
      setError(err);
    }
  }
  return (
    <ResourceList title="API keys" path="/v1/keys" reloadKey={reloadKey} empty="No keys yet. Create one above."
      intro="Keys act for this organization (never as the operator's admin). A key's text is shown once, when it is made."
      columns={[
        { label: 'Name', cell: (k) => k.name },
        { label: 'ID', cell: (k) => mono(k.id) },
        { label: 'Created', cell: (k) => when(k.createdAt) },
        { label: 'Expires', cell: (k) => (k.expiresAt ? when(k.expiresAt) : 'never') },
        {
          label: 'Actions',
          cell: (k) => (k.admin ? <span class="notice">the admin key</span> : (
            <button class="danger" onClick={() => revoke(k)} aria-label={`Revoke key ${k.name || k.id}`}>Revoke</button>
          )),
        },
      ]}>
      <CreateKey onMade={(key) => { setMade(key); reload(); }} />
      {made && <NewKey made={made} key={made.id} onDone={() => setMade(null)} />}
      <ErrorNote error={error} />
    </ResourceList>
  );
}
