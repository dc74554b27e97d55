import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CHROMIUM, CHROMIUM_ARGS } from '../../harness/bench/browser.js';
import { writeSyntheticRun } from '../../harness/bench/reports.js';
import { runCli } from '../helpers/cli.js';

/** Debian's chromium, started as the bench starts it. In CI (CI=true) it must be there: a missing browser fails, never skips. */
const suite = existsSync(CHROMIUM) || process.env.CI ? describe : describe.skip;

let browser: Browser;
let root: string;
const files: Record<'small' | 'large', string> = { small: '', large: '' };

/** A report of `n` synthetic fixtures plus a second run (another "model") for the matrix, rendered by the CLI. */
async function renderReport(n: number, name: string): Promise<string> {
  const dir = path.join(root, name);
  const { runId, reportsDir, transcriptsDir } = await writeSyntheticRun(dir, n);
  const file = path.join(reportsDir, runId, 'report.json');
  const other = JSON.parse(await readFile(file, 'utf8')) as { runId: string; subject: string; fixtures: { verdict: string }[] };
  other.runId = `${runId}-b`;
  other.subject = 'model-b';
  other.fixtures.forEach((f, i) => (f.verdict = i % 3 ? f.verdict : 'not_green'));
  await writeFile(path.join(dir, 'b.json'), JSON.stringify(other));
  const out = path.join(dir, 'matrix.html');
  const r = await runCli([
    'report',
    runId,
    path.join(dir, 'b.json'),
    '--format',
    'html',
    '--out',
    out,
    '--reports',
    reportsDir,
    '--transcripts',
    transcriptsDir,
  ]);
  expect(r.stderr).toContain('warning: no transcript at'); // the doctored second run has none
  expect(r.code).toBe(0);
  return out;
}

/** Opens a report from disk, recording every console error, page error and request that leaves the file. */
async function open(file: string): Promise<{ page: Page; problems: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 }, deviceScaleFactor: 1 });
  const problems: string[] = [];
  page.on('console', (m) => void (m.type() === 'error' && problems.push(`console: ${m.text()}`)));
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('request', (r) => void (!r.url().startsWith('file://') && !r.url().startsWith('data:') && problems.push(`request: ${r.url()}`)));
  await page.goto(`file://${file}`, { waitUntil: 'load' });
  return { page, problems };
}

/** Counts, in a screenshot of a region, the pixels unlike the page background (and the saturated ones). */
async function inkIn(page: Page, selector: string): Promise<{ ink: number; colour: number; total: number }> {
  const box = (await page.locator(selector).first().boundingBox())!;
  const png = await page.screenshot({ clip: box });
  const blank = await browser.newPage();
  try {
    // A string, not a function: the tests are type-checked without the DOM library.
    return (await blank.evaluate(`(async () => {
      const img = new Image();
      img.src = 'data:image/png;base64,${png.toString('base64')}';
      await img.decode();
      const c = document.createElement('canvas');
      c.width = img.width;
      c.height = img.height;
      const ctx = c.getContext('2d');
      ctx.drawImage(img, 0, 0);
      const px = ctx.getImageData(0, 0, c.width, c.height).data;
      let ink = 0, colour = 0;
      for (let i = 0; i < px.length; i += 4) {
        const r = px[i], g = px[i + 1], b = px[i + 2];
        if (r + g + b < 700) ink++;
        if (Math.max(r, g, b) - Math.min(r, g, b) > 60) colour++;
      }
      return { ink, colour, total: px.length / 4 };
    })()`)) as { ink: number; colour: number; total: number };
  } finally {
    await blank.close();
  }
}

suite('report.html in headless Chromium', () => {
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    root = await mkdtemp(path.join(os.tmpdir(), 'rg-chromium-'));
    files.small = await renderReport(40, 'small');
    files.large = await renderReport(1000, 'large');
  });
  afterAll(async () => {
    await browser?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  test('loads from disk with no console error and no request; summary, matrix and timeline are visible in a screenshot', async () => {
    const { page, problems } = await open(files.small);
    for (const selector of ['#summary .card', '#matrix table.matrix', '#timeline svg.tl-svg']) {
      const box = await page.locator(selector).first().boundingBox();
      expect(box, selector).not.toBeNull();
      expect(box!.width, selector).toBeGreaterThan(300);
      expect(box!.height, selector).toBeGreaterThan(30);
      expect(await page.locator(selector).first().isVisible(), selector).toBe(true);
    }
    await expect(page.locator('#summary .card').count()).resolves.toBe(2);
    const summary = await inkIn(page, '#summary .card');
    expect(summary.ink / summary.total).toBeGreaterThan(0.01); // text is drawn
    await page.locator('#timeline svg.tl-svg').first().scrollIntoViewIfNeeded();
    const timeline = await inkIn(page, '#timeline svg.tl-svg');
    expect(timeline.colour / timeline.total).toBeGreaterThan(0.3); // the phase bars fill the slots
    await page.locator('#matrix').scrollIntoViewIfNeeded();
    const matrix = await inkIn(page, '#matrix .matrix-wrap');
    expect(matrix.colour).toBeGreaterThan(500); // the verdict chips
    expect(problems).toEqual([]);
    await page.close();
  });

  test('a fixture opens into its patch, RED against GREEN and logs; the filter and the timeline answer', async () => {
    const { page, problems } = await open(files.small);
    await page.locator('#f-0 > summary').click();
    await page.locator('#f-0 table.tests').first().waitFor(); // built on the toggle event, a task after the click
    await expect(page.locator('#f-0 table.tests tbody tr').count()).resolves.toBe(8 * 2);
    await expect(page.locator('#f-0 pre.diff').first().textContent()).resolves.toContain('+    return x + 4');
    await expect(page.locator('#f-0 details.log').count()).resolves.toBe(2);
    await page.locator('#filter').fill('fx0007');
    await expect(page.locator('.matrix tbody tr:visible').count()).resolves.toBe(1);
    await expect(page.locator('#shown').textContent()).resolves.toBe('1 of 40 shown');
    await page.locator('#filter').fill('');
    const svg = page.locator('#timeline svg.tl-svg').first();
    await svg.scrollIntoViewIfNeeded();
    const box = (await svg.boundingBox())!;
    await page.mouse.move(box.x + 3, box.y + 8);
    await expect(page.locator('#tip').textContent()).resolves.toMatch(/^fx\d{4}_\w+ · \w+ \d/);
    expect(problems).toEqual([]);
    await page.close();
  });

  test('1,000 fixtures (× 2 runs): under 10 MB, opens, and its last fixture opens into its details', async () => {
    // How fast it loads and answers is measured by `npm run bench` (report.html in headless Chromium).
    expect((await readFile(files.large)).length).toBeLessThan(10 * 1024 * 1024);
    const { page, problems } = await open(files.large);
    await page.locator('#f-999 > summary').click();
    await page.locator('#f-999 table.tests').first().waitFor();
    await expect(page.locator('#f-999 table.tests tbody tr').count()).resolves.toBeGreaterThan(0);
    expect(problems).toEqual([]);
    await page.close();
  });
});
