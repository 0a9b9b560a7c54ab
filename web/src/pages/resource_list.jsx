import { useEffect, useState } from 'preact/hooks';
import { listAll } from '../api.js';
import { Empty, ErrorNote } from '../components.jsx';

// A page that is one table of a list API: `columns` are [{label, cell(item)}]; `items(answer)`
// picks the rows out of the answer (every page's items: listAll follows nextCursor). A new resource's page is a call of this. `section`: a part
// of another page (an h2 in a section, not the page's main); `after`: shown below the table.
export function ResourceList({ title, path, items = (a) => a.items, columns, empty, intro, children, reloadKey, section, after }) {
  const [rows, setRows] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    // A reload that answers after a newer one must not show its older rows.
    let current = true;
    listAll(path).then((answer) => { if (current) { setRows(items(answer)); setError(null); } },
      (err) => { if (current) setError(err); });
    return () => { current = false; };
  }, [path, reloadKey]);
  const Box = section ? 'section' : 'main';
  return (
    <Box>
      <div class="toolbar">{section ? <h2>{title}</h2> : <h1>{title}</h1>}</div>
      {intro && <p class="notice">{intro}</p>}
      {children}
      <ErrorNote error={error} />
      {rows === null && !error && <p class="empty">Loading…</p>}
      {rows !== null && rows.length === 0 && <Empty>{empty}</Empty>}
      {rows !== null && rows.length > 0 && (
        <div class="table-wrap">
          <table class="resources">
            <thead><tr>{columns.map((c) => <th>{c.label}</th>)}</tr></thead>
            <tbody>
              {rows.map((row) => (
                <tr>{columns.map((c) => <td data-label={c.label}>{c.cell(row)}</td>)}</tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {after}
    </Box>
  );
}
