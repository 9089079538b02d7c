// The UI part of the bench: opens explorer views in headless Chromium and prints, per view and
// run, the time from the navigation to the drawing and from the lineage request to the drawing,
// with what was drawn. `go run ./bench -parts ui` runs it.
//
//   node bench/draw.cjs RUNS URL...      → one JSON line per run
const chromium = require('../ui/web/chromium.cjs');

(async () => {
  const [runs, ...urls] = process.argv.slice(2);
  const browser = await chromium.launch({ width: 1600, height: 1000 });
  try {
    const { page } = browser;
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
    await browser.close();
  }
})().catch((e) => { console.error('draw:', e.message); process.exit(1); });
