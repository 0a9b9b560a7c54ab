import { useEffect, useState } from 'preact/hooks';
import { sandboxPath } from '../api.js';
import { when } from '../format.js';
import { Empty } from '../components.jsx';

const LIVE = ['provisioning', 'running'];

// The startup command's output while the sandbox is provisioning or running, as it is
// produced (GET /v1/sandboxes/{id}/startup/stream): what was printed so far, then each piece
// as it comes; a 'reset' replaces it all (older output was dropped), 'result' ends it. When
// the browser reconnects, the stream starts again from the beginning, so the text does too.
function useStartupOutput(id, live) {
  const [output, setOutput] = useState(null);
  useEffect(() => {
    setOutput(null);
    if (!live) return undefined;
    const source = new EventSource(`${sandboxPath(id)}/startup/stream`);
    const parse = (e) => {
      try {
        return JSON.parse(e.data);
      } catch (err) {
        return null;
      }
    };
    source.addEventListener('open', () => setOutput({ stdout: '', stderr: '', truncated: false }));
    for (const kind of ['stdout', 'stderr']) {
      source.addEventListener(kind, (e) => {
        const data = parse(e);
        if (data) setOutput((o) => ({ ...(o || { stdout: '', stderr: '' }), [kind]: (o ? o[kind] : '') + data.data }));
      });
    }
    source.addEventListener('reset', (e) => {
      const data = parse(e);
      if (data) setOutput({ stdout: data.stdout, stderr: data.stderr, truncated: true });
    });
    source.addEventListener('result', (e) => {
      const sandbox = parse(e);
      source.close();
      const s = sandbox && sandbox.startup;
      if (s) setOutput({ stdout: s.stdout || '', stderr: s.stderr || '', truncated: !!s.truncated });
    });
    return () => source.close();
  }, [id, live]);
  return output;
}

// The startup command: its settings and result (refreshed by the sandbox's status events) and
// its output, streamed while it runs.
export function Startup({ sandbox }) {
  const startup = sandbox.startup;
  const live = !!startup && LIVE.includes(sandbox.status);
  const streamed = useStartupOutput(sandbox.id, live);
  if (!startup) return <Empty>No startup command: an interactive sandbox.</Empty>;
  const output = live && streamed ? streamed
    : { stdout: startup.stdout, stderr: startup.stderr, truncated: startup.truncated };
  const command = startup.mode === 'command' ? (startup.argv || []).join(' ') : "the image's default command";
  return (
    <>
      <dl class="facts">
        <dt>Runs</dt><dd class="mono">{command}</dd>
        <dt>Exit code</dt><dd>{startup.exitCode ?? '—'}</dd>
        <dt>Signal</dt><dd>{startup.signal ?? '—'}</dd>
        <dt>Error</dt><dd>{startup.error ?? '—'}</dd>
        <dt>Started</dt><dd>{when(startup.startedAt)}</dd>
        <dt>Finished</dt><dd>{when(startup.finishedAt)}</dd>
      </dl>
      {output.truncated && <p class="notice">Older output was dropped (the latest 256 KiB are kept).</p>}
      <h3>stdout</h3>
      <pre class="output" data-stream="startup-stdout" aria-live="polite">{output.stdout || ' '}</pre>
      <h3>stderr</h3>
      <pre class="output" data-stream="startup-stderr">{output.stderr || ' '}</pre>
    </>
  );
}
