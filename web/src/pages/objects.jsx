import { useEffect, useRef, useState } from 'preact/hooks';
import { api, listAll } from '../api.js';
import { bytes, when } from '../format.js';
import { Empty, ErrorNote } from '../components.jsx';

const content = (key) => `/v1/objects/content?key=${encodeURIComponent(key)}`;

// Object storage by folder ('/'-separated prefixes): download, upload, delete, signed links.
export function Objects() {
  const [prefix, setPrefix] = useState('');
  const [page, setPage] = useState(null);
  const [error, setError] = useState(null);
  const [note, setNote] = useState('');
  const [link, setLink] = useState(null);
  const upload = useRef(null);

  const load = (p) => {
    setError(null);
    listAll(`/v1/objects?delimiter=/&limit=200&prefix=${encodeURIComponent(p)}`)
      .then((answer) => { setPage(answer); setPrefix(p); }, setError);
  };
  useEffect(() => load(''), []);

  async function send(e) {
    e.preventDefault();
    const file = upload.current.files[0];
    if (!file) return;
    setError(null);
    try {
      await api('PUT', content(prefix + file.name), file);
      setNote(`Uploaded ${prefix}${file.name}.`);
      upload.current.value = '';
      load(prefix);
    } catch (err) {
      setError(err);
    }
  }
  async function remove(key) {
    if (!confirm(`Delete ${key}?`)) return;
    try {
      await api('DELETE', content(key));
      setNote(`Deleted ${key}.`);
      load(prefix);
    } catch (err) {
      setError(err);
    }
  }
  async function share(key) {
    try {
      const made = await api('POST', '/v1/objects/url', { key, ttlSeconds: 3600 });
      setLink({ key, url: new URL(made.url, location.href).href });
    } catch (err) {
      setError(err);
    }
  }

  const up = prefix.replace(/[^/]*\/$/, '');
  const empty = page && page.items.length === 0 && page.commonPrefixes.length === 0;
  return (
    <main>
      <div class="toolbar"><h1>Objects</h1></div>
      <p class="notice">Folder: <span class="mono">/{prefix}</span>
        {prefix && <> <button class="link" onClick={() => load(up)}>up</button></>}</p>
      <ErrorNote error={error} />
      {empty && <Empty>No objects here. Upload one below, or use the S3 gateway.</Empty>}
      {page && !empty && (
        <div class="table-wrap">
          <table class="resources">
            <thead><tr><th>Key</th><th>Size</th><th>Modified</th><th><span class="sr-only">Actions</span></th></tr></thead>
            <tbody>
              {page.commonPrefixes.map((p) => (
                <tr key={p}>
                  <td data-label="Key"><button class="link" onClick={() => load(p)}>{p.slice(prefix.length)}</button></td>
                  <td></td><td></td><td></td>
                </tr>
              ))}
              {page.items.map((o) => (
                <tr key={o.key}>
                  <td data-label="Key"><a href={content(o.key)} download={o.key.split('/').pop()}>{o.key.slice(prefix.length)}</a></td>
                  <td data-label="Size">{bytes(o.size)}</td>
                  <td data-label="Modified">{when(o.lastModified)}</td>
                  <td>
                    <span class="row-actions">
                      <button onClick={() => share(o.key)} aria-label={`Link to ${o.key}`}>Link</button>
                      <button class="danger" onClick={() => remove(o.key)} aria-label={`Delete ${o.key}`}>Delete</button>
                    </span>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {link && (
        <div class="panel" role="status">
          <label for="object-link">A download link to {link.key}, good for an hour, for anyone who has it:</label>
          <input id="object-link" class="mono" readOnly value={link.url} onFocus={(e) => e.currentTarget.select()} />
        </div>
      )}
      <form class="inline" onSubmit={send} aria-label="Upload an object">
        <label for="object-file">Upload to /{prefix}</label>
        <input id="object-file" type="file" ref={upload} />
        <button type="submit">Upload</button>
      </form>
      {note && <p class="notice" role="status">{note}</p>}
    </main>
  );
}
