// The creation dialog's fields to a POST /v1/sandboxes body, checked with the API's own limits
// (docs/openapi.yaml, CreateSandboxRequest) so that a mistake is named before anything is sent.
// Returns {body} or {errors: {field: sentence}}.

export const LIMITS = {
  cpu: [1, 32],
  memoryMiB: [128, 65536],
  diskMiB: [64, 131072],
  ttlSeconds: [1, 86400],
};

export const DEFAULTS = {
  name: '',
  image: '',
  cpu: '1',
  memoryMiB: '1024',
  diskMiB: '2048',
  ttlSeconds: '3600',
  noExpiry: false,
  labels: '',
  startup: 'none',
  command: '',
  network: 'open',
  destinations: '',
  hostnames: '',
  allowDns: false,
};

function integerIn(text, [min, max]) {
  const t = String(text).trim();
  if (!/^[0-9]+$/.test(t)) return null;
  const n = Number(t);
  return n >= min && n <= max ? n : null;
}

function lines(text) {
  return text.split('\n').map((l) => l.trim()).filter((l) => l !== '');
}

const IPV4 = /^(25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])(\.(25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])){3}$/;
const HOSTNAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9-]{2,63}$/i;

function port(text) {
  return integerIn(text, [1, 65535]);
}

export function buildCreateRequest(form) {
  const errors = {};
  const body = { labels: {} };

  const name = form.name.trim();
  if (name.length > 256) errors.name = 'Name must be at most 256 characters.';
  else if (name) body.labels.name = name;

  for (const line of lines(form.labels)) {
    const eq = line.indexOf('=');
    const key = eq > 0 ? line.slice(0, eq).trim() : '';
    if (!key || key.length > 63 || key.startsWith('platform.')) {
      errors.labels = `"${line}" is not key=value with a key of 1 to 63 bytes not starting with platform.`;
      break;
    }
    const value = line.slice(eq + 1).trim();
    if (value.length > 256) {
      errors.labels = `The value of ${key} must be at most 256 characters.`;
      break;
    }
    if (key === 'name' && name) {
      errors.labels = 'Set the name in Name, not as a label.';
      break;
    }
    body.labels[key] = value;
  }
  if (Object.keys(body.labels).length > 32) errors.labels = 'At most 32 labels (the name counts).';

  const image = form.image.trim();
  if (image.length > 512) errors.image = 'Image must be at most 512 characters.';
  else if (image) body.image = image;

  for (const [field, words] of [['cpu', 'CPU'], ['memoryMiB', 'Memory'], ['diskMiB', 'Disk']]) {
    const n = integerIn(form[field], LIMITS[field]);
    if (n === null) errors[field] = `${words} must be a whole number from ${LIMITS[field][0]} to ${LIMITS[field][1]}.`;
    else body[field] = n;
  }
  if (form.noExpiry) {
    body.ttlSeconds = null;
  } else {
    const ttl = integerIn(form.ttlSeconds, LIMITS.ttlSeconds);
    if (ttl === null) errors.ttlSeconds = 'Lifetime must be 1 to 86400 seconds.';
    else body.ttlSeconds = ttl;
  }

  if (form.startup === 'image') {
    body.startup = { mode: 'image' };
  } else if (form.startup === 'command') {
    if (!form.command.trim()) errors.command = 'Enter the shell command to run.';
    else if (new TextEncoder().encode(form.command).length > 32000) errors.command = 'The command must fit 32 KiB.';
    else body.startup = { mode: 'command', argv: ['/bin/sh', '-lc', form.command] };
  }

  if (form.network === 'none') {
    body.network = { egress: 'none' };
  } else if (form.network === 'allowlist') {
    const network = { egress: 'allowlist', allow: [], hostnames: [] };
    for (const line of lines(form.destinations)) {
      const m = /^(tcp|udp)\s+(\S+)\s+(\S+)$/i.exec(line);
      const address = m ? m[2] : '';
      if (!m || !(IPV4.test(address) || address.includes(':')) || port(m[3]) === null) {
        errors.destinations = `"${line}" is not "tcp|udp <public IP> <port 1-65535>".`;
        break;
      }
      network.allow.push({ protocol: m[1].toLowerCase(), address, port: port(m[3]) });
    }
    for (const line of lines(form.hostnames)) {
      const m = /^(\S+)\s+(\S+)$/.exec(line);
      if (!m || !HOSTNAME.test(m[1]) || port(m[2]) === null) {
        errors.hostnames = `"${line}" is not "<exact hostname> <port 1-65535>".`;
        break;
      }
      network.hostnames.push({ hostname: m[1].toLowerCase(), port: port(m[2]) });
    }
    if (network.allow.length > 64) errors.destinations = 'At most 64 allowed destinations.';
    if (network.hostnames.length > 64) errors.hostnames = 'At most 64 allowed TLS hostnames.';
    if (form.allowDns) network.dns = '1.1.1.1';
    if (network.hostnames.length === 0) delete network.hostnames;
    body.network = network;
  }
  return Object.keys(errors).length ? { errors } : { body };
}
