// The dashboard's automations, jobs, apps, database, sites and account pages in Debian's chromium,
// headless, driven by playwright-core against the adaptd that tests/e2e/test_dashboard.py
// started, with an automation and an app it made. Every step asserts what a person would see;
// the first failure ends the run (exit 1). Screenshots go to $ARTIFACTS.
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
const require = createRequire(join(env('WEB_DIR'), 'package.json'));
const { chromium } = require('playwright-core');
const SLOW = 120_000;
const AUTOMATION = env('AUTOMATION_NAME');
const APP = env('APP_NAME');

const step = (text) => console.log(`- ${text}`);
const shot = (page, name) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });

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
  // Every API answer that was not a success, in the output: a failed step says what the page saw.
  page.on('response', (r) => {
    if (r.status() >= 400) console.log(`  (${r.request().method()} ${new URL(r.url()).pathname} -> ${r.status()})`);
  });
  const main = page.locator('main');

  step('sign in with an API key');
  await page.goto(URL_ + '/');
  await page.getByRole('button', { name: 'Use an API key', exact: true }).click();
  await page.getByLabel('API key', { exact: true }).fill(env('API_KEY'));
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { name: 'Sandboxes' }).waitFor();

  step('automations: disable and enable with the version read, run now, its runs, delete');
  await page.getByRole('link', { name: 'Automations', exact: true }).click();
  await main.getByRole('cell', { name: AUTOMATION, exact: true }).waitFor();
  await main.getByText('every 3600 s').waitFor();
  await page.getByRole('button', { name: `Disable ${AUTOMATION}`, exact: true }).click();
  await page.getByRole('button', { name: `Enable ${AUTOMATION}`, exact: true }).waitFor();
  await main.locator('.status-disabled').waitFor();
  await page.getByRole('button', { name: `Enable ${AUTOMATION}`, exact: true }).click();
  await page.getByRole('button', { name: `Disable ${AUTOMATION}`, exact: true }).waitFor();
  await page.getByRole('button', { name: `Run now ${AUTOMATION}`, exact: true }).click();
  await page.getByRole('heading', { name: `Runs of ${AUTOMATION}` }).waitFor();
  await main.getByRole('cell', { name: 'manual', exact: true }).waitFor();
  // The run's row follows it to its end without a reload, with its output.
  await main.locator('section .status-succeeded').waitFor({ timeout: SLOW });
  await main.locator('section pre.cell-output', { hasText: 'report' }).waitFor();
  // A run the page did not start (here through the API, as a schedule would) appears and
  // ends there too: the page follows the run events of /v1/events.
  const trigger = await fetch(`${URL_}/v1/automations/${env('AUTOMATION_ID')}/trigger`, {
    method: 'POST', headers: { Authorization: `Bearer ${env('API_KEY')}` },
  });
  assert.equal(trigger.status, 202, 'triggering a run through the API');
  await main.locator('section .status-succeeded').nth(1).waitFor({ timeout: SLOW });
  await shot(page, 'automations');
  await page.getByRole('button', { name: `Delete ${AUTOMATION}`, exact: true }).click();
  await main.getByText('No automations yet.').waitFor();
  assert.equal(await page.getByRole('alert').count(), 0, 'the automations page shows an error');

  step('apps: URL and replicas, releases with the current one, scale to 0, delete');
  await page.getByRole('link', { name: 'Apps', exact: true }).click();
  await main.getByRole('cell', { name: APP, exact: true }).waitFor();
  await main.getByText('1 ready of 1').waitFor();
  await main.getByRole('link', { name: env('APP_URL'), exact: true }).waitFor();
  await page.getByRole('button', { name: `Releases of ${APP}`, exact: true }).click();
  await page.getByRole('heading', { name: `Releases of ${APP}` }).waitFor();
  const releases = main.locator('section');
  await releases.getByRole('cell', { name: env('RELEASE_ID'), exact: true }).waitFor();
  await releases.locator('.status-current').waitFor();
  await shot(page, 'apps');
  await page.getByLabel(`Replicas of ${APP}`, { exact: true }).fill('0');
  await page.getByRole('button', { name: `Scale ${APP}`, exact: true }).click();
  await main.getByText(/ready of 0$/).waitFor({ timeout: SLOW });
  await page.getByRole('button', { name: `Delete ${APP}`, exact: true }).click();
  await main.getByText('No apps yet.').waitFor({ timeout: SLOW });
  assert.equal(await page.getByRole('alert').count(), 0, 'the apps page shows an error');

  step('database: none yet, create it, its status, rotate its password');
  await page.getByRole('link', { name: 'Database', exact: true }).click();
  await main.getByText('This organization has no database yet.').waitFor();
  await page.getByRole('button', { name: 'Create database', exact: true }).click();
  await main.locator('.status-ready').waitFor({ timeout: SLOW });
  await main.getByText(/^15\./).waitFor();
  await page.getByRole('button', { name: 'Rotate password', exact: true }).click();
  await main.getByText('The password was changed.', { exact: false }).waitFor({ timeout: SLOW });
  assert.equal((await page.content()).includes('password='), false);
  await shot(page, 'database');

  step('sites: a bad source is refused in words, a prefix with index.html publishes, delete');
  await page.getByRole('link', { name: 'Sites', exact: true }).click();
  await main.getByText('No sites yet.', { exact: false }).waitFor();
  await page.getByLabel('Source (object prefix)', { exact: true }).fill('nothing-here/');
  await page.getByRole('button', { name: 'Publish', exact: true }).click();
  await page.getByRole('alert').filter({ hasText: 'index.html' }).waitFor();
  await page.getByLabel('Source (object prefix)', { exact: true }).fill(env('SITE_SOURCE'));
  await page.getByLabel('Name', { exact: true }).fill('dashsite');
  await page.getByRole('button', { name: 'Publish', exact: true }).click();
  await main.getByRole('cell', { name: 'dashsite', exact: true }).waitFor();
  await main.getByRole('link', { name: /^https?:\/\/dashsite-.*\/index\.html$/ }).waitFor();
  assert.equal(await page.getByRole('alert').count(), 0, 'the error stays after a publish');
  await shot(page, 'sites');
  await page.getByRole('button', { name: 'Delete site dashsite', exact: true }).click();
  await main.getByText('No sites yet.', { exact: false }).waitFor();

  step('account: usage over time as two charts');
  await page.getByRole('link', { name: 'Account', exact: true }).click();
  await page.getByRole('heading', { name: 'Usage over time' }).waitFor();
  // The test waited for metering to charge its sandbox: today's usage is more than nothing.
  const summary = main.getByText(/^Last 14 days \(UTC\): [0-9.]+ CPU-hours, charged [0-9.]+\.$/);
  await summary.waitFor();
  assert.doesNotMatch(await summary.textContent(), /: 0\.000 CPU-hours/);
  for (const title of ['CPU-hours per day', 'Memory GiB-hours per day']) {
    const chart = page.getByRole('figure', { name: title });
    await chart.locator('canvas').waitFor();
  }
  await shot(page, 'account-usage');

  step('jobs: a job submitted through the API appears and ends without a reload, its runs, delete');
  const submitted = await fetch(`${URL_}/v1/jobs`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${env('API_KEY')}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ command: 'echo job-report' }),
  });
  assert.equal(submitted.status, 201, 'submitting a job through the API');
  const job = await submitted.json();
  await page.goto(URL_ + '/#/jobs');
  await page.getByRole('heading', { name: 'Jobs', exact: true }).waitFor();
  const jobRow = main.locator('tr', { hasText: job.id });
  await jobRow.locator('.status-succeeded').waitFor({ timeout: SLOW });
  await page.getByRole('button', { name: `Runs of ${job.id}`, exact: true }).click();
  await main.locator('section pre.cell-output', { hasText: 'job-report' }).waitFor({ timeout: SLOW });
  await shot(page, 'jobs');
  await page.getByRole('button', { name: `Delete ${job.id}`, exact: true }).click();
  await jobRow.waitFor({ state: 'detached' });
  assert.equal(await page.getByRole('alert').count(), 0, 'the jobs page shows an error');

  step('at 360 px in dark mode the new pages read without sideways scrolling');
  const phone = await browser.newContext({ viewport: { width: 360, height: 780 }, colorScheme: 'dark' });
  const phonePage = await phone.newPage();
  await phonePage.goto(URL_ + '/');
  await phonePage.getByRole('button', { name: 'Use an API key', exact: true }).click();
  await phonePage.getByLabel('API key', { exact: true }).fill(env('API_KEY'));
  await phonePage.keyboard.press('Enter');
  await phonePage.getByRole('heading', { name: 'Sandboxes' }).waitFor();
  for (const [hash, heading] of [['automations', 'Automations'], ['jobs', 'Jobs'], ['apps', 'Apps'], ['sites', 'Sites'],
    ['database', 'Database'], ['account', 'Usage over time']]) {
    await phonePage.goto(`${URL_}/#/${hash}`);
    await phonePage.getByRole('heading', { name: heading, exact: true }).waitFor();
    await phonePage.locator('main table, main .empty:not(:has-text("Loading")), main dl, main canvas').first().waitFor();
    const width = await phonePage.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= 360, `#/${hash} is ${width} px wide at 360`);
  }
  await shot(phonePage, 'account-360-dark');
  await phone.close();

  assert.deepEqual(errors, [], 'the page reported errors');
  console.log('ALL STEPS PASSED');
} catch (e) {
  if (page) await shot(page, 'pages-failure').catch(() => {});
  throw e;
} finally {
  await browser.close();
}
