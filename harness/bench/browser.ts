import { existsSync } from 'node:fs';

/** Debian's chromium, started as the workplace's machines allow (no sandbox, no background network). */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-sync',
];

/**
 * How a large report.html behaves in a real browser: time to load from disk, time for a fixture
 * (the last one) to open into its details, and how long a task posted afterwards waits for the
 * main thread. The e2e test checks that these things work; this measures how fast.
 */
export async function benchReportInBrowser(file: string, lastFixture: number): Promise<void> {
  const title = `report.html in headless Chromium (targets: load < 5 s, open a fixture < 2 s, main-thread lag < 250 ms)`;
  if (!existsSync(CHROMIUM)) return console.log(`\n${title}: skipped (no ${CHROMIUM}: apt-get install chromium)`);
  // playwright-core is a dev dependency: the bench runs from a checkout, not from the package.
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    let t0 = performance.now();
    await page.goto(`file://${file}`, { waitUntil: 'load' });
    const loadMs = performance.now() - t0;
    t0 = performance.now();
    await page.locator(`#f-${lastFixture} > summary`).click();
    await page.locator(`#f-${lastFixture} table.tests`).first().waitFor();
    const openMs = performance.now() - t0;
    const lag = (await page.evaluate(
      'new Promise((resolve) => { const s = performance.now(); setTimeout(() => resolve(performance.now() - s), 0); })',
    )) as number;
    console.log(`\n${title}`);
    console.log(`  load ${loadMs.toFixed(0)} ms   open fixture #${lastFixture} ${openMs.toFixed(0)} ms   lag ${lag.toFixed(1)} ms`);
  } finally {
    await browser.close();
  }
}
