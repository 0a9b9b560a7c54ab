// Small pieces every page uses. Text goes through JSX, which escapes it: no page ever sets
// HTML from a value.

export function StatusBadge({ status }) {
  return <span class={`status status-${status}`}>{status}</span>;
}

export function ErrorNote({ error }) {
  if (!error) return null;
  return <p class="error" role="alert">{error.message || String(error)}</p>;
}

export function Field({ label, id, error, hint, children }) {
  return (
    <div class={error ? 'field invalid' : 'field'}>
      <label for={id}>{label}</label>
      {children}
      {hint && <small class="hint">{hint}</small>}
      {error && <small class="field-error" id={`${id}-error`}>{error}</small>}
    </div>
  );
}

export function Empty({ children }) {
  return <p class="empty">{children}</p>;
}
