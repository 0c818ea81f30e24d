/**
 * The HTML report as a person sees it: rendered by headless Chromium (Debian's `chromium`), checked for
 * its charts, axis titles and a clean console, with a screenshot kept under test-artifacts/.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { ROOT, runCli, tmpDir } from './helpers/cli.ts';
import { needFile } from './helpers/preconditions.ts';

const CHROMIUM = process.env.DBSMACK_CHROMIUM ?? '/usr/bin/chromium';
const FIX = path.join(ROOT, 'test', 'fixtures', 'report');
const ARTIFACTS = path.join(ROOT, 'test-artifacts');

test('the HTML report renders in Chromium with every chart, axis titles and no page errors', async (t) => {
  if (!needFile(t, CHROMIUM, 'headless Chromium renders the report (apt-get install chromium)')) return;
  const dir = tmpDir('dbsmack-report-browser-');
  const html = path.join(dir, 'report.html');
  const r = await runCli([
    'report',
    path.join(FIX, 'sweep-mariadb.json'),
    path.join(FIX, 'sweep-postgres.json'),
    path.join(FIX, 'compare-qps.json'),
    path.join(FIX, 'run-stall.json'),
    '--html',
    html,
  ]);
  assert.equal(r.code, 0, r.stderr);

  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM });
  try {
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    const problems: string[] = [];
    const requests: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    page.on('request', (req) => {
      if (!req.url().startsWith('file:')) requests.push(req.url());
    });
    await page.goto(pathToFileURL(html).href, { waitUntil: 'load' });

    const charts = await page.locator('figure > svg').count();
    // throughput, ratio, latency, 2 sweep timelines + the stalled run's, 3 histograms
    assert.equal(charts, 9, 'charts drawn');
    const text = (await page.locator('main').textContent()) ?? '';
    for (const title of [
      'throughput (queries/s)',
      'clients (concurrent connections)',
      'event latency (ms, log scale)',
      'ratio (candidate ÷ mariadb)',
      'time since the measured part began (s)',
      'p95 statement latency (ms)',
      'statement latency (ms, log scale)',
      'share of statements (%)',
    ]) {
      assert.ok(text.includes(title), `axis title "${title}" on the page`);
    }
    // every SVG is laid out with a visible size
    const sizes = await page.$$eval('figure > svg', (els) => els.map((e) => e.getBoundingClientRect().width));
    assert.ok(
      sizes.every((w) => w > 300),
      `chart widths ${sizes.join(', ')}`,
    );
    // ids stay unique when several SVGs share the page
    const dupIds = await page.$$eval('[id]', (els) => {
      const seen = new Map<string, number>();
      for (const e of els) seen.set(e.id, (seen.get(e.id) ?? 0) + 1);
      return [...seen].filter(([, n]) => n > 1).map(([id]) => id);
    });
    assert.deepEqual(dupIds, []);
    assert.deepEqual(problems, [], 'console errors');
    assert.deepEqual(requests, [], 'no network requests');
    // no script at all: the charts show without JavaScript
    assert.equal(await page.locator('script').count(), 0);

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, 'report.png'), fullPage: true });
  } finally {
    await browser.close();
  }
});
