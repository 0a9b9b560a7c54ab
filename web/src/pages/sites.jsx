import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { when } from '../format.js';
import { ErrorNote, Field } from '../components.jsx';
import { ResourceList } from './resource_list.jsx';

const mono = (text) => <span class="mono">{text}</span>;

// Publishes an object prefix holding index.html as a site (POST /v1/sites); the API names
// what is wrong with the source in words.
function Publish({ onPublished }) {
  const [source, setSource] = useState('');
  const [name, setName] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  async function submit(e) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const body = { source };
      if (name) body.name = name;
      await api('POST', '/v1/sites', body);
      setSource('');
      setName('');
      onPublished();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }
  return (
    <form class="row-form" onSubmit={submit} aria-label="Publish a site">
      <Field label="Source (object prefix)" id="site-source" hint="Objects under it, with index.html among them.">
        <input id="site-source" required value={source} placeholder="web/" onInput={(e) => setSource(e.currentTarget.value)} />
      </Field>
      <Field label="Name" id="site-name">
        <input id="site-name" value={name} placeholder="demo" onInput={(e) => setName(e.currentTarget.value)} />
      </Field>
      <button class="primary" type="submit" disabled={busy}>Publish</button>
      <ErrorNote error={error} />
    </form>
  );
}

// Static sites: each a release copied from an object prefix, served at its own hostname.
export function Sites() {
  const [error, setError] = useState(null);
  const [reloadKey, setReloadKey] = useState(0);
  const reload = () => setReloadKey((k) => k + 1);
  async function remove(site) {
    if (!confirm(`Delete the site ${site.name}? Its address answers 404 at once.`)) return;
    setError(null);
    try {
      await api('DELETE', `/v1/sites/${encodeURIComponent(site.id)}`);
      reload();
    } catch (err) {
      setError(err);
    }
  }
  return (
    <ResourceList title="Sites" path="/v1/sites?limit=200" reloadKey={reloadKey}
      empty="No sites yet. Upload files with index.html under a prefix in Objects, then publish the prefix."
      columns={[
        { label: 'Name', cell: (s) => s.name },
        { label: 'URL', cell: (s) => <a class="mono" href={s.url} rel="noreferrer" target="_blank">{s.url}</a> },
        { label: 'Source', cell: (s) => mono(s.source || '—') },
        { label: 'Files', cell: (s) => s.files ?? '—' },
        { label: 'Published', cell: (s) => when(s.publishedAt || s.createdAt) },
        { label: 'Actions', cell: (s) => <button class="danger" onClick={() => remove(s)} aria-label={`Delete site ${s.name}`}>Delete</button> },
      ]}>
      <Publish onPublished={reload} />
      <ErrorNote error={error} />
    </ResourceList>
  );
}
