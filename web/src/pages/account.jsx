import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { bytes, memory, when } from '../format.js';
import { ErrorNote } from '../components.jsx';

const amount = (nanos) => (nanos / 1e9).toFixed(2);

// Usage against the plan's limits, and the balance.
export function Account() {
  const [account, setAccount] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => { api('GET', '/v1/account').then(setAccount, setError); }, []);
  if (error) return <main><h1>Account</h1><ErrorNote error={error} /></main>;
  if (!account) return <main><p class="empty">Loading…</p></main>;
  const u = account.usage || {};
  const l = (account.plan && account.plan.limits) || {};
  const limit = (v, fmt = (x) => x) => (v == null ? 'no limit' : fmt(v));
  const rows = [
    ['Sandboxes', u.sandboxes, limit(l.concurrentSandboxes)],
    ['Running sandboxes', u.runningSandboxes, '—'],
    ['CPUs', u.cpu, limit(l.cpu)],
    ['Memory', memory(u.memoryMiB || 0), limit(l.memoryMiB, memory)],
    ['Persistent storage', memory(u.persistentStorageMiB || 0), limit(l.persistentStorageGiB, (g) => `${g} GiB`)],
    ['Object storage', bytes(u.objectStorageBytes || 0), limit(l.objectStorageGiB, (g) => `${g} GiB`)],
    ['Endpoints', u.endpoints, limit(l.endpoints)],
  ];
  return (
    <main>
      <h1>Account</h1>
      <dl class="facts">
        <dt>Organization</dt><dd>{account.orgName} <span class="mono">({account.orgId})</span></dd>
        <dt>Registered</dt><dd>{account.registered ? `yes, ${when(account.registeredAt)}` : 'not yet'}</dd>
        <dt>Plan</dt><dd>{account.plan ? account.plan.name || account.plan.id : '—'}</dd>
        <dt>Balance</dt><dd>{amount(account.balanceNanos || 0)}</dd>
      </dl>
      <h2>Usage and limits</h2>
      <div class="table-wrap">
        <table class="resources">
          <thead><tr><th>Resource</th><th>In use</th><th>Limit</th></tr></thead>
          <tbody>
            {rows.map(([name, used, max]) => (
              <tr><td data-label="Resource">{name}</td><td data-label="In use">{used ?? 0}</td><td data-label="Limit">{max}</td></tr>
            ))}
          </tbody>
        </table>
      </div>
    </main>
  );
}
