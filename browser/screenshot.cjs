// Screenshot of one lineage query in Neo4j Browser, driven in headless Chromium by playwright-core.
//
//   node deploy/browser/screenshot.cjs OUT.png     (deploy/browser/screenshot.sh installs playwright-core)
//
// Environment: COLLINE_BROWSER_URL (default http://127.0.0.1:17474/browser/), COLLINE_BOLT_URL
// (bolt://127.0.0.1:17687, no authentication), COLLINE_CHROMIUM (/usr/bin/chromium),
// COLLINE_COLUMN (the column whose upstream is shown).
const path = require('path');
const fs = require('fs');
const os = require('os');
const { chromium } = require(process.env.PLAYWRIGHT_CORE || 'playwright-core');

const out = process.argv[2] || 'docs/img/browser-upstream.png';
const browserURL = process.env.COLLINE_BROWSER_URL || 'http://127.0.0.1:17474/browser/';
const bolt = process.env.COLLINE_BOLT_URL || 'bolt://127.0.0.1:17687';
const column = process.env.COLLINE_COLUMN || 'spark_catalog/shop.top_countries#revenue';
// Query 2 of docs/browser.md with the parameter inlined, so that one editor run shows it.
const query = `MATCH p = (:Column)-[:FEEDS*1..5]->(:Column {key: '${column}'}) RETURN p`;

(async () => {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'colline-chromium-'));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.COLLINE_CHROMIUM || '/usr/bin/chromium',
    headless: true,
    viewport: { width: 1400, height: 900 },
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--no-first-run', '--disable-sync', '--disable-dev-shm-usage'],
  });
  try {
    const page = ctx.pages()[0] || await ctx.newPage();
    page.setDefaultTimeout(60000);
    await page.goto(`${browserURL}?connectURL=${encodeURIComponent(bolt)}&preselectAuthMethod=NO_AUTH`);
    // With auth off Browser connects by itself; otherwise submit the connect form (no
    // authentication is preselected).
    const connected = page.getByText(/You are connected as|Connected to Neo4j/i).first();
    const connect = page.getByRole('button', { name: /^connect$/i });
    await connected.or(connect).first().waitFor();
    if (!(await connected.isVisible())) {
      await connect.click();
      await connected.waitFor();
    }
    // Close the usage-statistics banner if shown, clear the start frames, run the query.
    const banner = page.getByText(/we collect information on product usage/i);
    if (await banner.isVisible()) {
      await banner.locator('xpath=..').locator('button, [role=button], svg').last().click().catch(() => {});
    }
    const editor = page.locator('#monaco-main-editor textarea, [data-testid="activeEditor"] textarea').first();
    for (const cmd of [':clear', query]) {
      await editor.click();
      await page.keyboard.type(cmd);
      await page.keyboard.press('Control+Enter');
      await page.waitForTimeout(1000);
    }
    // Wait for the graph: node circles in the result frame's SVG.
    await page.locator('svg g.node').first().waitFor();
    await page.waitForTimeout(4000); // let the force layout settle
    fs.mkdirSync(path.dirname(out), { recursive: true });
    await page.screenshot({ path: out });
    const nodes = await page.locator('svg g.node').count();
    console.log(`screenshot: ${out} (${nodes} nodes drawn)`);
    if (nodes === 0) process.exitCode = 1;
  } finally {
    await ctx.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
})().catch((e) => { console.error('screenshot:', e.message); process.exit(1); });
