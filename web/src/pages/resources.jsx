import { bytes, memory, when } from '../format.js';
import { StatusBadge } from '../components.jsx';
import { ResourceList } from './resource_list.jsx';

const mono = (text) => <span class="mono">{text}</span>;

export function Images() {
  return (
    <ResourceList title="Images" path="/v1/images?limit=200"
      empty="No images yet. Pull or import one with adapt image, or create a sandbox from a registry image."
      columns={[
        { label: 'Reference', cell: (i) => mono(i.reference) },
        { label: 'ID', cell: (i) => mono(i.id) },
        { label: 'Status', cell: (i) => <StatusBadge status={i.status} /> },
        { label: 'Size', cell: (i) => (i.size ? bytes(i.size) : '—') },
        { label: 'Platform', cell: (i) => i.platform || '—' },
        { label: 'Created', cell: (i) => when(i.createdAt) },
      ]} />
  );
}

export function Storage() {
  return (
    <ResourceList title="Storage" path="/v1/storage"
      empty="No persistent storage yet. A durable sandbox makes the default one."
      columns={[
        { label: 'Name', cell: (v) => v.name },
        { label: 'Size', cell: (v) => memory(v.sizeMiB) },
        { label: 'Used', cell: (v) => (v.usedBytes == null ? 'not mounted' : bytes(v.usedBytes)) },
        { label: 'Status', cell: (v) => <StatusBadge status={v.status} /> },
        { label: 'Attached to', cell: (v) => mono((v.attachments || []).map((a) => a.sandboxId).join(', ') || '—') },
        { label: 'Created', cell: (v) => when(v.createdAt) },
      ]} />
  );
}

export function Secrets() {
  return (
    <ResourceList title="Secrets" path="/v1/secrets"
      intro="Names and versions only: values go in through the API or the CLI and never come out."
      empty="No secrets yet. Add one with adapt secret set."
      columns={[
        { label: 'Name', cell: (s) => mono(s.name) },
        { label: 'Version', cell: (s) => s.version },
        { label: 'Updated', cell: (s) => when(s.updatedAt) },
      ]} />
  );
}

// The jobs page lives in jobs.jsx.
export { Jobs } from './jobs.jsx';

// The API keys page lives in keys.jsx.
export { Keys } from './keys.jsx';
