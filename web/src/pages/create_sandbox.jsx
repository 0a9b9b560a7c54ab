import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api.js';
import { buildCreateRequest, DEFAULTS, LIMITS } from '../create_request.js';
import { ErrorNote, Field } from '../components.jsx';

// The creation dialog: the seed's fields and words (CPU, memory, disk, lifetime, Startup,
// Network), checked as the API checks them before anything is sent.
export function CreateSandbox({ onCreated, onCancel }) {
  const [form, setForm] = useState(DEFAULTS);
  const [errors, setErrors] = useState({});
  const [failure, setFailure] = useState(null);
  const [busy, setBusy] = useState(false);
  const [environments, setEnvironments] = useState([]);
  const nameInput = useRef(null);
  // Before paint: the dialog is never shown without the focus in it and Escape working.
  useLayoutEffect(() => {
    nameInput.current.focus();
    // Escape closes the dialog wherever the focus is.
    const onKey = (e) => { if (e.key === 'Escape') onCancel(); };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);
  useEffect(() => {
    // Suggestions only: the API still decides what an image may be.
    api('GET', '/v1/environments').then((e) => setEnvironments(e.environments.filter((x) => x.available)), () => {});
  }, []);
  const set = (field) => (e) => {
    const t = e.currentTarget;
    setForm({ ...form, [field]: t.type === 'checkbox' ? t.checked : t.value });
  };
  const radio = (field, value, label) => (
    <label class="choice">
      <input type="radio" name={field} value={value} checked={form[field] === value}
        onChange={() => setForm({ ...form, [field]: value })} />
      {label}
    </label>
  );
  const number = (field, label, hint) => (
    <Field label={label} id={`f-${field}`} error={errors[field]} hint={hint}>
      <input id={`f-${field}`} inputMode="numeric" value={form[field]} onInput={set(field)}
        aria-invalid={errors[field] ? 'true' : 'false'} />
    </Field>
  );

  async function submit(e) {
    e.preventDefault();
    setFailure(null);
    const built = buildCreateRequest(form);
    if (built.errors) {
      setErrors(built.errors);
      return;
    }
    setErrors({});
    setBusy(true);
    try {
      onCreated(await api('POST', '/v1/sandboxes', built.body));
    } catch (err) {
      if (err.field) setErrors({ [err.field.split('.')[0]]: err.message });
      setFailure(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form class="panel create" onSubmit={submit} aria-label="Create a sandbox">
      <h2>Create a sandbox</h2>
      <div class="grid">
        <Field label="Name" id="f-name" error={errors.name} hint="Shown as the sandbox's name (labels.name).">
          <input id="f-name" value={form.name} onInput={set('name')} maxLength={256} ref={nameInput} />
        </Field>
        <Field label="Image" id="f-image" error={errors.image} hint="Empty: adaptd's default image.">
          <input id="f-image" value={form.image} onInput={set('image')} placeholder="debian:12" list="f-image-environments" />
          <datalist id="f-image-environments">
            {environments.map((e) => <option value={e.alias}>{e.description}</option>)}
          </datalist>
        </Field>
        {number('cpu', 'CPU', `${LIMITS.cpu[0]}–${LIMITS.cpu[1]} CPUs`)}
        {number('memoryMiB', 'Memory (MiB)', '128–65,536 MiB')}
        {number('diskMiB', 'Disk (MiB)', '64–131,072 MiB')}
        <div>
          {number('ttlSeconds', 'Lifetime (seconds)', '1–86,400 seconds from creation')}
          <label class="choice">
            <input type="checkbox" checked={form.noExpiry} onChange={set('noExpiry')} />
            No automatic expiry
          </label>
        </div>
      </div>
      <Field label="Labels" id="f-labels" error={errors.labels} hint="One key=value a line, up to 32.">
        <textarea id="f-labels" rows={2} value={form.labels} onInput={set('labels')} />
      </Field>
      <fieldset>
        <legend>Startup</legend>
        {radio('startup', 'none', 'None (interactive: lives until deleted or expired)')}
        {radio('startup', 'image', "The image's default command")}
        {radio('startup', 'command', 'Custom shell command')}
        {form.startup === 'command' && (
          <Field label="Command" id="f-command" error={errors.command} hint="Run with /bin/sh -lc, which must exist in the image.">
            <input id="f-command" value={form.command} onInput={set('command')} class="mono" />
          </Field>
        )}
      </fieldset>
      <fieldset>
        <legend>Network</legend>
        {radio('network', 'open', 'Public internet')}
        {radio('network', 'none', 'Disabled')}
        {radio('network', 'allowlist', 'Restricted destinations')}
        {form.network === 'allowlist' && (
          <div class="grid">
            <Field label="Allowed destinations" id="f-destinations" error={errors.destinations}
              hint="One rule a line, e.g. tcp 1.1.1.1 443">
              <textarea id="f-destinations" rows={3} class="mono" value={form.destinations}
                onInput={set('destinations')} />
            </Field>
            <Field label="Allowed TLS hostnames" id="f-hostnames" error={errors.hostnames}
              hint="One rule a line, e.g. api.openai.com 443">
              <textarea id="f-hostnames" rows={3} class="mono" value={form.hostnames}
                onInput={set('hostnames')} />
            </Field>
            <label class="choice">
              <input type="checkbox" checked={form.allowDns} onChange={set('allowDns')} />
              Allow DNS lookups
            </label>
            <small class="hint">Queries go through 1.1.1.1; connections still need an allowed destination.</small>
          </div>
        )}
      </fieldset>
      <ErrorNote error={failure} />
      <div class="actions">
        <button type="submit" class="primary" disabled={busy}>Create</button>
        <button type="button" onClick={onCancel}>Cancel</button>
      </div>
    </form>
  );
}
