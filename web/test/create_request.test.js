// The creation dialog's checks (web/src/create_request.js) against the API's limits
// (docs/openapi.yaml, CreateSandboxRequest and NetworkRequest). Run: node --test web/test
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildCreateRequest, DEFAULTS } from '../src/create_request.js';

const build = (fields) => buildCreateRequest({ ...DEFAULTS, ...fields });

test('the defaults make the API defaults, with no startup and the public internet', () => {
  assert.deepEqual(build({}).body, { labels: {}, cpu: 1, memoryMiB: 1024, diskMiB: 2048, ttlSeconds: 3600 });
});

test('each limit is checked at both ends', () => {
  for (const [field, low, high] of [['cpu', 1, 32], ['memoryMiB', 128, 65536], ['diskMiB', 64, 131072], ['ttlSeconds', 1, 86400]]) {
    assert.equal(build({ [field]: String(low) }).body[field], low, field);
    assert.equal(build({ [field]: String(high) }).body[field], high, field);
    assert.ok(build({ [field]: String(low - 1) }).errors[field], `${field} below`);
    assert.ok(build({ [field]: String(high + 1) }).errors[field], `${field} above`);
    assert.ok(build({ [field]: '1.5' }).errors[field], `${field} fraction`);
  }
  assert.equal(build({ noExpiry: true, ttlSeconds: '' }).body.ttlSeconds, null);
});

test('the name is labels.name and labels are key=value lines, at most 32', () => {
  const { body } = build({ name: 'worker', labels: 'project=research\n\nteam = ml' });
  assert.deepEqual(body.labels, { name: 'worker', project: 'research', team: 'ml' });
  assert.ok(build({ labels: 'platform.x=1' }).errors.labels);
  assert.ok(build({ labels: 'no-equals' }).errors.labels);
  assert.ok(build({ labels: `${'k'.repeat(64)}=v` }).errors.labels);
  const many = Array.from({ length: 32 }, (_, i) => `k${i}=v`).join('\n');
  assert.ok(build({ labels: many }).body);
  assert.ok(build({ name: 'n', labels: many }).errors.labels);
});

test('a custom startup command runs with /bin/sh -lc; the image default is image mode', () => {
  assert.deepEqual(build({ startup: 'command', command: 'echo $HOME' }).body.startup,
    { mode: 'command', argv: ['/bin/sh', '-lc', 'echo $HOME'] });
  assert.deepEqual(build({ startup: 'image' }).body.startup, { mode: 'image' });
  assert.ok(build({ startup: 'command', command: '  ' }).errors.command);
});

test('restricted destinations take exact rules; DNS only when asked', () => {
  const { body } = build({
    network: 'allowlist', destinations: 'tcp 1.1.1.1 443\nUDP 2606:4700::1111 53',
    hostnames: 'api.openai.com 443',
  });
  assert.deepEqual(body.network, {
    egress: 'allowlist',
    allow: [{ protocol: 'tcp', address: '1.1.1.1', port: 443 }, { protocol: 'udp', address: '2606:4700::1111', port: 53 }],
    hostnames: [{ hostname: 'api.openai.com', port: 443 }],
  });
  assert.equal(build({ network: 'allowlist', allowDns: true }).body.network.dns, '1.1.1.1');
  assert.deepEqual(build({ network: 'none' }).body.network, { egress: 'none' });
  for (const bad of ['tcp 1.1.1.1', 'icmp 1.1.1.1 1', 'tcp 1.1.1.1 0', 'tcp 1.1.1.1 65536', 'tcp 1.1.1.256 443', 'tcp example.com 443']) {
    assert.ok(build({ network: 'allowlist', destinations: bad }).errors.destinations, bad);
  }
  for (const bad of ['*.openai.com 443', 'api.openai.com', 'api.openai.com 70000']) {
    assert.ok(build({ network: 'allowlist', hostnames: bad }).errors.hostnames, bad);
  }
});
