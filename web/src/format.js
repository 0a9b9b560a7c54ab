// Words and numbers for the tables: ages, time left, sizes.

export function displayName(sandbox) {
  return (sandbox.labels && sandbox.labels.name) || '';
}

function span(seconds) {
  if (seconds < 60) return `${Math.max(0, Math.floor(seconds))}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)}h ${Math.floor((seconds % 3600) / 60)}m`;
  return `${Math.floor(seconds / 86400)}d ${Math.floor((seconds % 86400) / 3600)}h`;
}

export function age(iso, now = Date.now()) {
  return iso ? span((now - Date.parse(iso)) / 1000) : '';
}

export function ttlLeft(sandbox, now = Date.now()) {
  if (!sandbox.expiresAt) return 'no expiry';
  const left = (Date.parse(sandbox.expiresAt) - now) / 1000;
  return left <= 0 ? 'expired' : span(left);
}

export function memory(mib) {
  return mib >= 1024 && mib % 1024 === 0 ? `${mib / 1024} GiB` : `${mib} MiB`;
}

export function bytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 * 1024 * 1024) return `${(n / 1024 / 1024).toFixed(1)} MiB`;
  return `${(n / 1024 / 1024 / 1024).toFixed(1)} GiB`;
}

export function when(iso) {
  return iso ? new Date(iso).toLocaleString() : '—';
}

export const STATUSES = ['provisioning', 'running', 'hibernated', 'completed', 'failed',
  'unresolved', 'unavailable', 'deleting'];
