// The dashboard in a real browser: Debian's chromium, headless, driven by playwright-core
// (web/package-lock.json pins it) against the adaptd that tests/e2e/test_dashboard.py started.
// Every step asserts what a person would see; the first failure ends the run with its
// sentence (exit 1). Screenshots go to $ARTIFACTS.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import assert from 'node:assert/strict';

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};
const URL_ = env('ADAPT_URL');
const ARTIFACTS = env('ARTIFACTS');
const require = createRequire(join(env('WEB_DIR'), 'package.json'));
const { chromium } = require('playwright-core');

const XSS_NAME = env('XSS_NAME');
const XSS_ID = env('XSS_ID');
const OTHER_ID = env('OTHER_ID');
const FORM_NAME = env('FORM_NAME');
const SLOW = 120_000;

function step(text) {
  console.log(`- ${text}`);
}

async function shot(page, name) {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

async function noScriptRan(page) {
  assert.equal(await page.evaluate(() => window.__xss), undefined, 'an injected script ran');
}

async function signInWithPassword(page, password) {
  await page.getByLabel('Email', { exact: true }).fill(env('EMAIL'));
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

let current = null;
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/lib/chromium/chromium',
  args: ['--no-sandbox'],
});
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
  const page = await context.newPage();
  current = page;
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error' && !/401|403|404/.test(m.text())) errors.push(m.text()); });

  step('the page comes with a strict policy and the sign-in form');
  const response = await page.goto(URL_ + '/');
  const headers = response.headers();
  assert.match(headers['content-security-policy'], /script-src 'self'/);
  assert.equal(headers['x-frame-options'], 'DENY');
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();

  step('a wrong password is refused in words');
  await signInWithPassword(page, 'not the password at all');
  await page.getByRole('alert').filter({ hasText: /password/i }).waitFor();

  step('email and password sign in; the session cookie is HttpOnly and SameSite=Strict');
  await signInWithPassword(page, env('PASSWORD'));
  // A password's check is slow on purpose (a memory-hard hash): on a loaded machine, slower.
  await page.getByRole('heading', { name: 'Sandboxes' }).waitFor({ timeout: SLOW });
  const [cookie] = (await context.cookies()).filter((c) => c.name === 'adapt_session');
  assert.ok(cookie && cookie.httpOnly && cookie.sameSite === 'Strict', JSON.stringify(cookie));
  assert.equal(await page.evaluate(() => document.cookie.includes('adapt_session')), false);

  step('labels, names and startup output are shown as text, never run');
  const xssRow = page.locator(`tr[data-id="${XSS_ID}"]`);
  await xssRow.waitFor();
  assert.equal(await xssRow.getByRole('link').textContent(), XSS_NAME);
  assert.equal(await page.locator('table img').count(), 0);
  await noScriptRan(page);

  step("another organization's sandbox never appears");
  assert.equal((await page.content()).includes(OTHER_ID), false);

  step('the form checks the API limits before sending');
  await page.evaluate(() => { window.__sameDocument = true; });
  await page.getByRole('button', { name: 'New sandbox', exact: true }).click();
  await page.getByRole('form', { name: 'Create a sandbox' }).waitFor();
  await page.keyboard.press('Escape');
  await page.getByRole('form', { name: 'Create a sandbox' }).waitFor({ state: 'detached' });
  await page.getByRole('button', { name: 'New sandbox', exact: true }).click();
  // The dialog opens with the focus in Name: typing goes there.
  await page.waitForFunction(() => document.activeElement && document.activeElement.id === 'f-name');
  await page.keyboard.type(FORM_NAME);
  assert.equal(await page.getByLabel('Name', { exact: true }).inputValue(), FORM_NAME);
  await page.getByLabel('CPU', { exact: true }).fill('33');
  await page.getByLabel('Restricted destinations', { exact: true }).check();
  await page.getByLabel('Allowed destinations', { exact: true }).fill('tcp 1.1.1.1 99999');
  await page.getByRole('button', { name: 'Create', exact: true }).click();
  await page.getByText('CPU must be a whole number from 1 to 32.').waitFor();
  await page.getByText('"tcp 1.1.1.1 99999" is not').waitFor();
  await shot(page, 'create-form');

  step('a sandbox created from the form turns running without a reload');
  await page.getByLabel('CPU', { exact: true }).fill('1');
  await page.getByLabel('Memory (MiB)', { exact: true }).fill('512');
  await page.getByLabel('Allowed destinations', { exact: true }).fill('tcp 1.1.1.1 443');
  await page.getByLabel('Allow DNS lookups', { exact: true }).check();
  await page.getByRole('button', { name: 'Create', exact: true }).click();
  const row = page.locator('tr', { has: page.getByRole('link', { name: FORM_NAME, exact: true }) });
  await row.waitFor();
  await row.locator('.status-running').waitFor({ timeout: SLOW });
  assert.equal(await page.evaluate(() => window.__sameDocument), true, 'the page reloaded');
  const formId = await row.getAttribute('data-id');
  console.log(`FORM_ID=${formId}`);
  await shot(page, 'sandboxes');

  step('the filter narrows the table by name and by status');
  await page.getByLabel('Filter', { exact: true }).fill(FORM_NAME);
  assert.equal(await page.locator('tbody tr').count(), 1);
  await page.getByLabel('Filter', { exact: true }).fill('');
  await page.getByLabel('Status', { exact: true }).selectOption('deleting');
  await page.getByText('No sandbox matches this filter.').waitFor();
  await page.getByLabel('Status', { exact: true }).selectOption('');

  step('the sandbox page runs a command and shows its output');
  await row.getByRole('link').click();
  await page.getByRole('heading', { name: FORM_NAME }).waitFor();
  await page.getByText('Restricted destinations').waitFor();
  await page.getByLabel('Command', { exact: true }).fill('echo dashboard-$((6*7)); echo to-stderr >&2');
  await page.getByRole('button', { name: 'Run', exact: true }).click();
  await page.locator('pre[data-stream="stdout"]', { hasText: 'dashboard-42' }).waitFor({ timeout: SLOW });
  await page.getByText(/Exit code 0/).waitFor({ timeout: SLOW });
  await page.locator('pre[data-stream="stderr"]', { hasText: 'to-stderr' }).waitFor();

  step('CPU and memory are charted from the stats of the running sandbox');
  await page.locator('.stats-now', { hasText: /CPU [0-9.]+% of 1 CPU · memory [0-9.]+ MiB of 512 MiB/ }).waitFor({ timeout: 20_000 });
  assert.equal(await page.locator('figure.chart canvas').count(), 2);

  step("the sandbox's events timeline shows it turning running");
  await page.locator('ol.timeline .status-running').first().waitFor();

  step('a file uploads, lists and downloads');
  await page.locator('#upload-file').setInputFiles({
    name: 'hello.txt', mimeType: 'text/plain', buffer: Buffer.from('uploaded through the dashboard\n'),
  });
  await page.getByRole('button', { name: 'Upload', exact: true }).click();
  await page.getByText('Uploaded hello.txt.').waitFor({ timeout: SLOW });
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('link', { name: 'hello.txt' }).click(),
  ]);
  assert.equal(readFileSync(await download.path(), 'utf8'), 'uploaded through the dashboard\n');
  await shot(page, 'sandbox');

  step('a directory is made and a file deleted after confirming');
  await page.getByLabel('New directory in /tmp', { exact: true }).fill('made-here');
  await page.getByRole('button', { name: 'Create directory', exact: true }).click();
  // Through the sandbox's agent, as the upload was: as slow as it under load.
  await page.getByRole('button', { name: 'made-here/', exact: true }).waitFor({ timeout: SLOW });
  page.once('dialog', (d) => d.accept());
  await page.getByRole('button', { name: 'Delete hello.txt', exact: true }).click();
  await page.getByText('Deleted hello.txt.').waitFor({ timeout: SLOW });
  await page.getByRole('link', { name: 'hello.txt', exact: true }).waitFor({ state: 'detached' });

  step('stop and start from the table');
  await page.getByRole('link', { name: 'Sandboxes' }).first().click();
  await row.waitFor();
  await row.getByRole('button', { name: /^Stop/ }).click();
  await row.locator('.status-hibernated').waitFor({ timeout: SLOW });
  await row.getByRole('button', { name: /^Start/ }).click();
  await row.locator('.status-running').waitFor({ timeout: SLOW });

  step('delete asks first, then the row disappears');
  await row.getByRole('button', { name: /^Delete/ }).click();
  await row.getByRole('button', { name: 'Confirm delete', exact: true }).waitFor();
  await page.keyboard.press('Escape');
  await row.getByRole('button', { name: 'Confirm delete', exact: true }).waitFor({ state: 'detached' });
  await row.getByRole('button', { name: /^Delete/ }).click();
  await row.getByRole('button', { name: 'Cancel', exact: true }).click();
  await row.getByRole('button', { name: /^Delete/ }).click();
  await row.getByRole('button', { name: 'Confirm delete', exact: true }).click();
  await page.locator(`tr[data-id="${formId}"]`).waitFor({ state: 'detached', timeout: SLOW });

  step("the startup result is shown as text on the sandbox's page");
  await page.goto(`${URL_}/#/sandboxes/${XSS_ID}`);
  await page.locator('pre[data-stream="startup-stdout"]', { hasText: '<script>' }).waitFor({ timeout: SLOW });
  assert.equal(await page.locator('main img').count(), 0);
  await noScriptRan(page);
  await page.getByText('Exit code').waitFor();

  step('the other pages: secrets by name and version only, images, storage, jobs, the account, keys');
  await page.getByRole('link', { name: 'Secrets', exact: true }).click();
  await page.getByRole('cell', { name: env('SECRET_NAME') }).waitFor();
  assert.equal((await page.content()).includes(env('SECRET_VALUE')), false, 'a secret value is on the page');
  await shot(page, 'secrets');
  for (const [link, heading] of [['Images', 'Images'], ['Storage', 'Storage'], ['Jobs', 'Jobs'], ['Account', 'Account']]) {
    await page.getByRole('link', { name: link, exact: true }).click();
    await page.getByRole('heading', { name: heading, exact: true }).waitFor();
    await page.locator('main table, main .empty:not(:has-text("Loading"))').first().waitFor();
    const alerts = await page.getByRole('alert').allTextContents();
    assert.equal(alerts.length, 0, `${link} shows an error: ${alerts.join(' | ')}`);
    await shot(page, link.toLowerCase());
  }
  await page.locator('main').getByText(env('ORG_ID')).waitFor();

  step('objects: a folder opens, an upload lists, a signed link downloads, a delete removes');
  await page.getByRole('link', { name: 'Objects', exact: true }).click();
  await page.getByRole('button', { name: 'reports/', exact: true }).click();
  await page.getByRole('link', { name: 'a.txt', exact: true }).waitFor();
  await page.locator('#object-file').setInputFiles({
    name: 'obj.txt', mimeType: 'text/plain', buffer: Buffer.from('an object from the dashboard'),
  });
  await page.getByRole('button', { name: 'Upload', exact: true }).click();
  await page.getByRole('link', { name: 'obj.txt', exact: true }).waitFor();
  await page.getByRole('button', { name: 'Link to reports/obj.txt', exact: true }).click();
  const signed = await page.locator('#object-link').inputValue();
  const fetched = await fetch(signed);
  assert.equal(await fetched.text(), 'an object from the dashboard');
  await shot(page, 'objects');
  page.once('dialog', (d) => d.accept());
  await page.getByRole('button', { name: 'Delete reports/obj.txt', exact: true }).click();
  await page.getByRole('link', { name: 'obj.txt', exact: true }).waitFor({ state: 'detached' });
  await page.getByRole('link', { name: 'API keys', exact: true }).click();
  await page.locator('main').getByRole('cell', { name: env('KEY_ID'), exact: true }).waitFor();
  await shot(page, 'keys');

  step('a revoked session returns to sign-in');
  const revoke = await fetch(`${URL_}/dashboard/session`, {
    method: 'DELETE', headers: { Cookie: `adapt_session=${cookie.value}`, 'X-Adapt-CSRF': '1' },
  });
  assert.equal(revoke.status, 204);
  await page.goto(`${URL_}/#/`);
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();

  step('an API key signs in; sign out ends the session');
  await page.getByRole('button', { name: 'Use an API key', exact: true }).click();
  await page.getByLabel('API key', { exact: true }).fill(env('API_KEY'));
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { name: 'Sandboxes' }).waitFor();
  await page.getByRole('button', { name: 'Sign out', exact: true }).click();
  await page.getByText('Signed out.').waitFor();
  await page.reload();
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();

  step('a made-up cookie is signed out');
  const forged = await browser.newContext();
  await forged.addCookies([{ name: 'adapt_session', value: 'forged', url: URL_ }]);
  const forgedPage = await forged.newPage();
  await forgedPage.goto(URL_ + '/');
  await forgedPage.getByRole('heading', { name: 'Sign in' }).waitFor();
  await forged.close();

  step('at 360 px in dark mode the table reads without sideways scrolling');
  const phone = await browser.newContext({ viewport: { width: 360, height: 780 }, colorScheme: 'dark' });
  const phonePage = await phone.newPage();
  await phonePage.goto(URL_ + '/');
  await phonePage.getByRole('button', { name: 'Use an API key', exact: true }).click();
  await phonePage.getByLabel('API key', { exact: true }).fill(env('API_KEY'));
  await phonePage.keyboard.press('Enter');
  await phonePage.locator(`tr[data-id="${XSS_ID}"]`).waitFor();
  const width = await phonePage.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(width <= 360, `the page is ${width} px wide at 360`);
  await shot(phonePage, 'sandboxes-360-dark');
  await phone.close();

  assert.deepEqual(errors, [], 'the page reported errors');
  console.log('ALL STEPS PASSED');
} catch (e) {
  // What the page showed when the step failed, beside the other screenshots.
  if (current) await shot(current, 'failure').catch(() => {});
  throw e;
} finally {
  await browser.close();
}
