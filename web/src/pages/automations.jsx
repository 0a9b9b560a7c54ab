import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { when } from '../format.js';
import { ErrorNote, StatusBadge } from '../components.jsx';
import { ResourceList } from './resource_list.jsx';

const mono = (text) => <span class="mono">{text}</span>;
const path = (a, verb = '') => `/v1/automations/${encodeURIComponent(a.id)}${verb}`;

function schedule(a) {
  if (a.cron) return `${a.cron} (${a.timeZone})`;
  return a.intervalSeconds ? `every ${a.intervalSeconds} s` : '—';
}

function state(a) {
  if (a.enabled) return <StatusBadge status="enabled" />;
  return (
    <span>
      <StatusBadge status="disabled" />
      {a.pausedReason && <small class="hint"> {a.pausedReason}</small>}
    </span>
  );
}

// One automation's runs (GET /v1/runs?automationId=), newest first.
function Runs({ automation, reloadKey }) {
  return (
    <ResourceList title={`Runs of ${automation.name}`} section reloadKey={reloadKey}
      path={`/v1/runs?automationId=${encodeURIComponent(automation.id)}&limit=50`}
      empty="No runs yet: the first comes at its next scheduled time, or with Run now."
      columns={[
        { label: 'Run', cell: (r) => mono(r.id) },
        { label: 'Trigger', cell: (r) => r.trigger },
        { label: 'Status', cell: (r) => <StatusBadge status={r.status} /> },
        { label: 'Exit code', cell: (r) => r.exitCode ?? '—' },
        { label: 'Scheduled', cell: (r) => when(r.scheduledAt) },
        { label: 'Ended', cell: (r) => when(r.endedAt) },
        { label: 'Output', cell: (r) => <pre class="cell-output">{r.error || r.stdout || r.stderr || ''}</pre> },
      ]} />
  );
}

// Scheduled commands: enable or disable (with the version read, so that a change made
// meanwhile is not overwritten), run now, delete; a row's Runs opens its runs below.
export function Automations() {
  const [error, setError] = useState(null);
  const [reloadKey, setReloadKey] = useState(0);
  const [shown, setShown] = useState(null);
  const reload = () => setReloadKey((k) => k + 1);
  async function act(method, url, headers) {
    setError(null);
    try {
      await api(method, url, undefined, headers);
      reload();
    } catch (err) {
      setError(err);
    }
  }
  const toggle = (a) => act('POST', path(a, a.enabled ? '/disable' : '/enable'), { headers: { 'If-Match': String(a.version) } });
  // A manual run ends on its own; there are no run events yet, so its row is read again every
  // 2 s until it has ended (at most 10 minutes), then the lists once more.
  async function follow(run) {
    for (let i = 0; i < 300; i++) {
      await new Promise((resolve) => setTimeout(resolve, 2000));
      let now;
      try {
        now = await api('GET', `/v1/runs/${encodeURIComponent(run.id)}`);
      } catch (err) {
        return;
      }
      if (now.status !== run.status) reload();
      if (now.endedAt) return;
      run = now;
    }
  }
  async function runNow(a) {
    setError(null);
    setShown(a);
    try {
      const run = await api('POST', path(a, '/trigger'));
      reload();
      follow(run);
    } catch (err) {
      setError(err);
    }
  }
  const remove = (a) => {
    if (!confirm(`Delete the automation ${a.name}? Its schedule stops; past runs stay listed.`)) return;
    if (shown && shown.id === a.id) setShown(null);
    act('DELETE', path(a));
  };
  const label = (verb, a) => `${verb} ${a.name}`;
  return (
    <ResourceList title="Automations" path="/v1/automations" reloadKey={reloadKey}
      after={shown && <Runs automation={shown} reloadKey={reloadKey} key={shown.id} />}
      empty="No automations yet. Schedule a command in a sandbox with adapt automation create."
      columns={[
        { label: 'Name', cell: (a) => a.name },
        { label: 'ID', cell: (a) => mono(a.id) },
        { label: 'Schedule', cell: (a) => mono(schedule(a)) },
        { label: 'Command', cell: (a) => mono((a.argv || []).join(' ')) },
        { label: 'Sandbox', cell: (a) => <a class="mono" href={`#/sandboxes/${a.sandboxId}`}>{a.sandboxId}</a> },
        { label: 'State', cell: state },
        { label: 'Next run', cell: (a) => (a.enabled && a.nextRuns && a.nextRuns.length ? when(a.nextRuns[0]) : '—') },
        { label: 'Failures in a row', cell: (a) => a.consecutiveFailures },
        {
          label: 'Actions', cell: (a) => (
            <span class="actions">
              <button onClick={() => toggle(a)} aria-label={label(a.enabled ? 'Disable' : 'Enable', a)}>
                {a.enabled ? 'Disable' : 'Enable'}
              </button>
              <button onClick={() => runNow(a)} aria-label={label('Run now', a)}>Run now</button>
              <button onClick={() => setShown(a)} aria-label={label('Runs of', a)}>Runs</button>
              <button class="danger" onClick={() => remove(a)} aria-label={label('Delete', a)}>Delete</button>
            </span>
          ),
        },
      ]}>
      <ErrorNote error={error} />
    </ResourceList>
  );
}
