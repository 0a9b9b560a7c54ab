import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { bytes, memory, when } from '../format.js';
import { ErrorNote } from '../components.jsx';
import { Chart } from './stats_charts.jsx';

const amount = (nanos) => (nanos / 1e9).toFixed(2);
const DAYS = 14;
const DAY_MS = 86400000;

// Usage per day over the last DAYS days, one GET /v1/account/usage per day (its totals).
function UsageChart() {
  const [days, setDays] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
    const starts = Array.from({ length: DAYS }, (_, i) => today - (DAYS - 1 - i) * DAY_MS);
    const iso = (ms) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
    Promise.all(starts.map((from) => api('GET', `/v1/account/usage?from=${iso(from)}&to=${iso(from + DAY_MS)}`)
      .then((u) => ({ t: from / 1000, ...u.total })))).then(setDays, setError);
  }, []);
  if (error) return <ErrorNote error={error} />;
  if (!days) return <p class="empty">Loading usage…</p>;
  const times = days.map((d) => d.t);
  const sum = days.reduce((n, d) => n + d.cpuMilliseconds, 0);
  return (
    <>
      <p class="stats-now" role="status">
        Last {DAYS} days (UTC): {(sum / 3.6e6).toFixed(3)} CPU-hours, charged {amount(days.reduce((n, d) => n + d.amountNanos, 0))}.
      </p>
      <div class="charts">
        <Chart title="CPU-hours per day" times={times} values={days.map((d) => d.cpuMilliseconds / 3.6e6)} unit="" span={DAYS * 86400} floor={0.01} />
        <Chart title="Memory GiB-hours per day" times={times} values={days.map((d) => d.memoryMiBMilliseconds / 1024 / 3.6e6)} unit="" span={DAYS * 86400} floor={0.01} />
      </div>
    </>
  );
}

// Usage against the plan's limits, and the balance.
export function Account() {
  const [account, setAccount] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => { api('GET', '/v1/account').then(setAccount, setError); }, []);
  // register_user: accepts the operator's terms, makes the billing account and default storage.
  async function register() {
    setError(null);
    try {
      setAccount(await api('POST', '/v1/account/register', {}));
    } catch (err) {
      setError(err);
    }
  }
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
        <dt>Registered</dt>
        <dd>
          {account.registered ? `yes, ${when(account.registeredAt)}` : (
            <span>
              not yet: until then the organization can look but not make anything.{' '}
              <button onClick={register}>Register</button>
            </span>
          )}
        </dd>
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
      <h2>Usage over time</h2>
      <UsageChart />
    </main>
  );
}
