// What the dashboard follows live, in Debian's chromium (headless, playwright-core) against
// the adaptd of tests/e2e/test_dashboard_live.py: a sandbox's startup output shown as it is
// printed, before its startup ends, and the apps page following `/v1/events` (replicas and
// deletion) without a reload. The test's sandbox's startup command waits for files that
// this script makes from the page's own "Run a command", so nothing depends on timing.
// The first failure ends the run (exit 1). Screenshots go to $ARTIFACTS.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import assert from 'node:assert/strict';

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};
const URL_ = env('ADAPT_URL');
const ARTIFACTS = env('ARTIFACTS');
const KEY = env('API_KEY');
const require = createRequire(join(env('WEB_DIR'), 'package.json'));
const { chromium } = require('playwright-core');
const SLOW = 120_000;
const APP = env('APP_NAME');

const step = (text) => console.log(`- ${text}`);
const shot = (page, name) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });

// The API, as another client (the CLI, an SDK) would change things behind the page's back.
async function call(method, path, body) {
  const res = await fetch(URL_ + path, {
    method,
    headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  assert.ok(res.ok, `${method} ${path} -> ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/lib/chromium/chromium',
  args: ['--no-sandbox'],
});
let page = null;
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error' && !/400|401|403|404/.test(m.text())) errors.push(m.text()); });
  page.on('dialog', (d) => d.accept());
  const main = page.locator('main');

  step('sign in with an API key');
  await page.goto(URL_ + '/');
  await page.getByRole('button', { name: 'Use an API key', exact: true }).click();
  await page.getByLabel('API key', { exact: true }).fill(KEY);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { name: 'Sandboxes' }).waitFor();

  step('the startup output streams: the first line shows while the startup still runs');
  await page.goto(`${URL_}/#/sandboxes/${env('STARTUP_ID')}`);
  await page.getByRole('heading', { name: env('STARTUP_NAME') }).waitFor();
  await main.locator('.toolbar .status-running').waitFor({ timeout: SLOW });
  // A mark that a reload of the page would lose.
  await page.evaluate(() => { window.__notReloaded = true; });
  const stdout = page.locator('pre[data-stream="startup-stdout"]');
  assert.doesNotMatch(await stdout.textContent(), /first-line/, 'printed before its trigger');
  await page.getByLabel('Command', { exact: true }).fill('touch /tmp/go-first');
  await page.getByRole('button', { name: 'Run', exact: true }).click();
  await stdout.filter({ hasText: 'first-line' }).waitFor({ timeout: SLOW });
  // The startup command waits for /tmp/go-second, which nothing has made: it has not ended.
  assert.doesNotMatch(await stdout.textContent(), /second-line/);
  await main.locator('.toolbar .status-running').waitFor();
  assert.equal(await stdout.textContent(), 'first-line\n', 'each piece of output once');
  const exitCode = page.locator('xpath=//dt[normalize-space()="Exit code"]/following-sibling::dd[1]');
  assert.equal(await exitCode.textContent(), '—');
  await shot(page, 'startup-streaming');
  await page.getByLabel('Command', { exact: true }).fill('touch /tmp/go-second');
  await page.getByRole('button', { name: 'Run', exact: true }).click();
  await stdout.filter({ hasText: /first-line\s+second-line/ }).waitFor({ timeout: SLOW });
  await page.locator('pre[data-stream="startup-stderr"]', { hasText: 'to-stderr' }).waitFor({ timeout: SLOW });
  await main.locator('.toolbar .status-completed').waitFor({ timeout: SLOW });
  await exitCode.filter({ hasText: /^0$/ }).waitFor({ timeout: SLOW });
  assert.equal(await stdout.textContent(), 'first-line\nsecond-line\n', 'each line once');
  assert.equal(await page.evaluate(() => window.__notReloaded), true, 'the page was reloaded');

  step('the apps page follows the organization events: scaled and deleted elsewhere');
  await page.getByRole('link', { name: 'Apps', exact: true }).click();
  await main.getByRole('cell', { name: APP, exact: true }).waitFor();
  await main.getByText('1 ready of 1').waitFor({ timeout: SLOW });
  await page.evaluate(() => { window.__notReloaded = true; });
  const appId = env('APP_ID');
  await call('POST', `/v1/apps/${appId}/scale`, { replicas: 2 });
  await main.getByText(/ready of 2$/).waitFor({ timeout: SLOW });
  await main.getByText('2 ready of 2').waitFor({ timeout: SLOW });
  await shot(page, 'apps-live');
  await call('DELETE', `/v1/apps/${appId}`);
  await main.getByText('No apps yet.', { exact: false }).waitFor({ timeout: SLOW });
  assert.equal(await page.evaluate(() => window.__notReloaded), true, 'the page was reloaded');
  assert.equal(await page.getByRole('alert').count(), 0, 'the apps page shows an error');

  assert.deepEqual(errors, [], 'the page reported errors');
  console.log('ALL STEPS PASSED');
} catch (e) {
  if (page) await shot(page, 'live-failure').catch(() => {});
  throw e;
} finally {
  await browser.close();
}
