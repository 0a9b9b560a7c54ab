// The organization's events (GET /v1/events, Server-Sent Events): one EventSource for
// the page, shared by every view. The browser reconnects with Last-Event-ID by itself; when the
// stream opens (again), listeners are told to reload their lists, so that nothing said while
// it was down is missed (list, then watch); so are they on a 'reset' event, which adaptd sends
// when the point the browser resumes from is no longer kept.
import { api } from './api.js';

const listeners = new Set();
let source = null;
let retry = null;

function notify(kind, data) {
  for (const listener of listeners) listener(kind, data);
}

function open() {
  source = new EventSource('/v1/events');
  source.addEventListener('open', () => notify('open'));
  for (const kind of ['status', 'app', 'run', 'reset']) {
    source.addEventListener(kind, (e) => {
      try {
        notify(kind, JSON.parse(e.data));
      } catch (err) {
        // a frame that is not JSON is not ours to show
      }
    });
  }
  source.addEventListener('error', () => {
    if (source.readyState !== EventSource.CLOSED) return;
    // Refused (401, or adaptd restarted): ask whether the session is still good; api() tells
    // the page when it is not, else try again shortly.
    source = null;
    api('GET', '/dashboard/session').then(
      () => { retry = setTimeout(open, 2000); },
      () => {},
    );
  });
}

// Calls `listener(kind, data)` for 'open', 'status' ({sandboxId, status, at}), 'app' ({appId,
// type, replicaId, message, at}), 'run' ({runId, automationId or jobId, status, attempt,
// sandboxId, exitCode once ended, at}) and 'reset' ({reason, lastEventId}); returns the function
// that stops it.
export function watchEvents(listener) {
  listeners.add(listener);
  if (!source && !retry) open();
  return () => listeners.delete(listener);
}

export function closeEvents() {
  clearTimeout(retry);
  retry = null;
  if (source) source.close();
  source = null;
}
