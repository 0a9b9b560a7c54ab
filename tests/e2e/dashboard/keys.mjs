// The dashboard's API keys page and its sign-up form in Debian's chromium, headless, driven by
// playwright-core against the adaptd that tests/e2e/test_dashboard_keys.py started.
// MODE=keys: a user signs in, makes a key (shown once, copied), sees that it works and that
// it is never shown again, revokes it after a confirmation (it stops working at once), and a
// name holding markup renders as text; the sign-in page offers no sign-up (adaptd runs
// without --allow-signup). MODE=signup: "Create an account" makes an account and signs in.
// MODE=register: that account's user (SIGNUP_EMAIL) registers it from the Account page.
// Every step asserts what a person would see; the first failure ends the run (exit 1).
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
const MODE = env('MODE');
const require = createRequire(join(env('WEB_DIR'), 'package.json'));
const { chromium } = require('playwright-core');

const step = (text) => console.log(`- ${text}`);
const shot = (page, name) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
// What a program holding `key` gets from the API.
const statusWithKey = async (key) =>
  (await fetch(`${URL_}/v1/keys`, { headers: { Authorization: `Bearer ${key}` } })).status;

// Opens the sign-in page once it knows whether sign-up is on.
async function openSignIn(page) {
  const asked = page.waitForResponse((r) => r.url().endsWith('/dashboard/signup'));
  await page.goto(URL_ + '/');
  assert.equal((await asked).status(), 200);
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
}

async function keysMode(page, errors) {
  const main = page.locator('main');
  step('without --allow-signup the sign-in page offers no sign-up');
  await openSignIn(page);
  assert.equal(await page.getByRole('button', { name: 'Create an account' }).count(), 0);

  step('a user signs in and opens API keys');
  await page.getByLabel('Email', { exact: true }).fill(env('EMAIL'));
  await page.getByLabel('Password', { exact: true }).fill(env('PASSWORD'));
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { name: 'Sandboxes' }).waitFor();
  await page.getByRole('link', { name: 'API keys', exact: true }).click();
  await main.getByRole('cell', { name: env('KEY_ID'), exact: true }).waitFor();

  step('create a key that expires in 30 days: shown once, with a copy button');
  await page.getByLabel('Name', { exact: true }).fill('browser-ci');
  await page.getByLabel('Expires', { exact: true }).selectOption({ label: 'In 30 days' });
  await page.getByRole('button', { name: 'Create key', exact: true }).click();
  const shown = page.getByLabel('The new key', { exact: true });
  await shown.waitFor();
  const key = await shown.inputValue();
  assert.match(key, /^adapt_[A-Za-z0-9_-]{20,}$/);
  await page.getByRole('button', { name: 'Copy', exact: true }).click();
  await page.getByRole('status').filter({ hasText: 'Copied.' }).waitFor();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), key, 'the clipboard holds the key');
  const row = main.getByRole('row').filter({ hasText: 'browser-ci' });
  await row.waitFor();
  assert.equal(await row.getByText('never').count(), 0, 'the new key shows its expiry');
  await shot(page, 'keys-created');
  assert.equal(await statusWithKey(key), 200, 'the new key works');

  step('once dismissed, the key text is nowhere: not on the page, not in the API');
  await page.getByRole('button', { name: 'Done', exact: true }).click();
  await shown.waitFor({ state: 'detached' });
  await page.reload();
  await main.getByRole('cell', { name: 'browser-ci', exact: true }).waitFor();
  assert.equal((await page.content()).includes(key), false, 'the page shows the key again');
  const listed = await (await fetch(`${URL_}/v1/keys`, { headers: { Authorization: `Bearer ${key}` } })).text();
  assert.equal(listed.includes(key), false, 'the list answers the key text');

  step('revoke asks first: cancelled, nothing changes; confirmed, the key stops at once');
  page.once('dialog', (d) => d.dismiss());
  await page.getByRole('button', { name: 'Revoke key browser-ci', exact: true }).click();
  await main.getByRole('cell', { name: 'browser-ci', exact: true }).waitFor();
  assert.equal(await statusWithKey(key), 200, 'a cancelled revoke revoked the key');
  page.once('dialog', (d) => d.accept());
  await page.getByRole('button', { name: 'Revoke key browser-ci', exact: true }).click();
  await main.getByRole('cell', { name: 'browser-ci', exact: true }).waitFor({ state: 'detached' });
  assert.equal(await statusWithKey(key), 401, 'the revoked key still works');
  await main.getByRole('cell', { name: env('KEY_ID'), exact: true }).waitFor();

  step('a name holding markup renders as text');
  const markup = '<img src=x onerror="window.__xss=1">';
  await page.getByLabel('Name', { exact: true }).fill(markup);
  await page.getByRole('button', { name: 'Create key', exact: true }).click();
  await page.getByRole('heading', { name: `Key ${markup} made` }).waitFor();
  await main.getByRole('cell', { name: markup, exact: true }).waitFor();
  assert.equal(await page.evaluate(() => window.__xss), undefined, 'an injected script ran');
  await shot(page, 'keys');
  assert.deepEqual(errors, [], 'the page reported errors');
}

async function signupMode(page, errors) {
  step('with --allow-signup the sign-in page offers "Create an account"');
  await openSignIn(page);
  await page.getByRole('button', { name: 'Create an account', exact: true }).click();
  await page.getByRole('heading', { name: 'Create an account' }).waitFor();
  await page.getByLabel('Email', { exact: true }).fill(env('SIGNUP_EMAIL'));
  await page.getByLabel('Password', { exact: true }).fill(env('PASSWORD'));
  await shot(page, 'sign-up');
  await page.getByRole('button', { name: 'Create account', exact: true }).click();
  await page.getByRole('heading', { name: 'Sandboxes' }).waitFor();
  const org = await page.locator('header .org').textContent();
  console.log(`SIGNUP_ORG=${org}`);

  step('the same email again is refused in words');
  await page.getByRole('button', { name: 'Sign out', exact: true }).click();
  await page.getByRole('button', { name: 'Create an account', exact: true }).click();
  await page.getByLabel('Email', { exact: true }).fill(env('SIGNUP_EMAIL'));
  await page.getByLabel('Password', { exact: true }).fill(env('PASSWORD'));
  await page.getByRole('button', { name: 'Create account', exact: true }).click();
  await page.getByRole('alert').filter({ hasText: 'sign in instead' }).waitFor();
  assert.deepEqual(errors, [], 'the page reported errors');
}

async function registerMode(page, errors) {
  step('an unregistered account registers from the Account page');
  await openSignIn(page);
  await page.getByLabel('Email', { exact: true }).fill(env('SIGNUP_EMAIL'));
  await page.getByLabel('Password', { exact: true }).fill(env('PASSWORD'));
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { name: 'Sandboxes' }).waitFor();
  await page.goto(URL_ + '/#/account');
  const main = page.locator('main');
  await main.getByText('not yet', { exact: false }).waitFor();
  await main.getByRole('button', { name: 'Register', exact: true }).click();
  await main.getByText(/^yes, /).waitFor();
  assert.equal(await main.getByRole('button', { name: 'Register', exact: true }).count(), 0);
  await shot(page, 'registered');
  assert.deepEqual(errors, [], 'the page reported errors');
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/lib/chromium/chromium',
  args: ['--no-sandbox'],
});
let page = null;
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: URL_ });
  page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error' && !/401|403|404|409/.test(m.text())) errors.push(m.text()); });
  if (MODE === 'keys') await keysMode(page, errors);
  else if (MODE === 'register') await registerMode(page, errors);
  else await signupMode(page, errors);
  console.log('ALL STEPS PASSED');
} catch (e) {
  if (page) await shot(page, `failure-${MODE}`).catch(() => {});
  throw e;
} finally {
  await browser.close();
}
