import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { watchEvents } from '../events.js';
import { when } from '../format.js';
import { ErrorNote, StatusBadge } from '../components.jsx';
import { ResourceList } from './resource_list.jsx';

const mono = (text) => <span class="mono">{text}</span>;
const path = (j, verb = '') => `/v1/jobs/${encodeURIComponent(j.id)}${verb}`;
// A job has ended unless it is queued or running (job_view.h).
const ended = (j) => j.status !== 'queued' && j.status !== 'running';
const RUNNING = new Set(['starting', 'running']);

// One job's attempts (GET /v1/runs?jobId=): a running one can be cancelled by its run id, as
// cancel_sandbox_job says (SIGTERM, then SIGKILL after the grace period).
function Runs({ job, reloadKey, act }) {
  return (
    <ResourceList title={`Runs of ${job.id}`} section reloadKey={reloadKey}
      path={`/v1/runs?jobId=${encodeURIComponent(job.id)}&limit=50`}
      empty="No runs yet: the job waits in its organization's queue."
      columns={[
        { label: 'Run', cell: (r) => mono(r.id) },
        { label: 'Attempt', cell: (r) => r.attempt },
        { label: 'Status', cell: (r) => <StatusBadge status={r.status} /> },
        { label: 'Exit code', cell: (r) => r.exitCode ?? '—' },
        { label: 'Started', cell: (r) => when(r.startedAt) },
        { label: 'Ended', cell: (r) => when(r.endedAt) },
        { label: 'Output', cell: (r) => <pre class="cell-output">{r.error || r.stdout || r.stderr || ''}</pre> },
        {
          label: 'Actions', cell: (r) => (RUNNING.has(r.status) ? (
            <button onClick={() => act('POST', `/v1/runs/${encodeURIComponent(r.id)}/cancel`)}
              aria-label={`Cancel run ${r.id}`}>Cancel</button>
          ) : '—'),
        },
      ]} />
  );
}

// One-shot jobs, following the run events of /v1/events without a reload: a queued job can be
// cancelled before it starts, a finished one deleted (its runs stay until they expire).
export function Jobs() {
  const [error, setError] = useState(null);
  const [reloadKey, setReloadKey] = useState(0);
  const [shown, setShown] = useState(null);
  const reload = () => setReloadKey((k) => k + 1);
  async function act(method, url) {
    setError(null);
    try {
      await api(method, url);
      reload();
    } catch (err) {
      setError(err);
    }
  }
  useEffect(() => {
    let timer = null;
    const soon = () => {
      if (!timer) timer = setTimeout(() => { timer = null; reload(); }, 500);
    };
    const stop = watchEvents((kind, event) => {
      if (kind === 'open' || kind === 'reset' || (kind === 'run' && event.jobId)) soon();
    });
    return () => {
      stop();
      clearTimeout(timer);
    };
  }, []);
  const remove = (j) => {
    if (!confirm(`Delete the job ${j.id}? Its runs stay listed until they expire.`)) return;
    if (shown && shown.id === j.id) setShown(null);
    act('DELETE', path(j));
  };
  return (
    <ResourceList title="Jobs" path="/v1/jobs?limit=100" reloadKey={reloadKey}
      after={shown && <Runs job={shown} reloadKey={reloadKey} act={act} key={shown.id} />}
      empty="No jobs yet. Submit one with adapt job run."
      columns={[
        { label: 'ID', cell: (j) => mono(j.id) },
        { label: 'Status', cell: (j) => <StatusBadge status={j.status} /> },
        { label: 'Command', cell: (j) => mono((j.argv || []).join(' ')) },
        { label: 'Image', cell: (j) => mono(j.image) },
        { label: 'Attempts', cell: (j) => `${j.attempts} of ${j.maxAttempts}` },
        { label: 'Exit code', cell: (j) => j.exitCode ?? '—' },
        { label: 'Created', cell: (j) => when(j.createdAt) },
        {
          label: 'Actions', cell: (j) => (
            <span class="actions">
              <button onClick={() => setShown(j)} aria-label={`Runs of ${j.id}`}>Runs</button>
              {j.status === 'queued' && (
                <button onClick={() => act('POST', path(j, '/cancel'))} aria-label={`Cancel ${j.id}`}>Cancel</button>
              )}
              {ended(j) && (
                <button class="danger" onClick={() => remove(j)} aria-label={`Delete ${j.id}`}>Delete</button>
              )}
            </span>
          ),
        },
      ]}>
      <ErrorNote error={error} />
    </ResourceList>
  );
}
