import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { watchEvents } from '../events.js';
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
  // Runs change on their own (scheduled, then ended): the organization's event stream says when
  // an automation's run changed status, and the lists are read again (at most every 500 ms).
  useEffect(() => {
    let timer = null;
    const soon = () => {
      if (!timer) timer = setTimeout(() => { timer = null; reload(); }, 500);
    };
    const stop = watchEvents((kind, event) => {
      if (kind === 'open' || kind === 'reset' || (kind === 'run' && event.automationId)) soon();
    });
    return () => {
      stop();
      clearTimeout(timer);
    };
  }, []);
  async function runNow(a) {
    setError(null);
    setShown(a);
    try {
      await api('POST', path(a, '/trigger'));
      reload();
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
