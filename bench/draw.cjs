// The UI part of the bench: opens explorer views in headless Chromium and prints, per view and
// run, the time from the navigation to the drawing and from the lineage request to the drawing,
// with what was drawn. `go run ./bench -parts ui` runs it (NODE_PATH: ui/web/node_modules).
//
//   node bench/draw.cjs RUNS URL...      → one JSON line per run
const fs = require('fs');
const os = require('os');
const path = require('path');
const { chromium } = require('playwright-core');

(async () => {
  const [runs, ...urls] = process.argv.slice(2);
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'colline-chromium-'));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.COLLINE_CHROMIUM || '/usr/bin/chromium',
    headless: true,
    viewport: { width: 1600, height: 1000 },
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
  try {
    const page = ctx.pages()[0] || await ctx.newPage();
    page.setDefaultTimeout(120000);
    for (const url of urls) {
      for (let i = 0; i < Number(runs); i++) {
        await page.goto('about:blank');
        await page.goto(url);
        await page.waitForFunction(() => document.body.dataset.drawn);
        const r = await page.evaluate(() => ({
          navigationToDrawnMs: Number(document.body.dataset.drawnAt),
          requestToDrawnMs: Number(document.body.dataset.drawMs),
          boxes: document.querySelectorAll('#drawing .box').length,
          columns: document.querySelectorAll('#drawing .row').length,
          links: document.querySelectorAll('#drawing .link').length,
        }));
        console.log(JSON.stringify({ url, run: i, ...r }));
      }
    }
  } finally {
    await ctx.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
})().catch((e) => { console.error('draw:', e.message); process.exit(1); });
