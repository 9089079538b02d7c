// The UI part of the bench: opens explorer views in headless Chromium and prints, per view and
// run, the time from the navigation to the drawing (the page's DOM built) and to the next frame
// after it (painted), from the lineage request to the drawing, and the page's own measures of its
// parts (answer, layout, svg), with what was drawn. `go run ./bench -parts ui` runs it.
//
//   node bench/draw.cjs RUNS URL...      → one JSON line per run
const chromium = require('../ui/web/chromium.cjs');

(async () => {
  const [runs, ...urls] = process.argv.slice(2);
  const browser = await chromium.launch({ width: 1600, height: 1000 });
  try {
    const { page } = browser;
    page.setDefaultTimeout(120000);
    // painted: the first task after the frame that follows the drawing
    await page.addInitScript(() => {
      new MutationObserver(() => requestAnimationFrame(() => setTimeout(() => {
        document.body.dataset.paintedAt ??= performance.now().toFixed(0);
      }))).observe(document, { subtree: true, attributeFilter: ['data-drawn'] });
    });
    for (const url of urls) {
      for (let i = 0; i < Number(runs); i++) {
        await page.goto('about:blank');
        await page.goto(url);
        await page.waitForFunction(() => document.body.dataset.paintedAt);
        const r = await page.evaluate(() => ({
          navigationToDrawnMs: Number(document.body.dataset.drawnAt),
          navigationToPaintedMs: Number(document.body.dataset.paintedAt),
          requestToDrawnMs: Number(document.body.dataset.drawMs),
          ...Object.fromEntries(['answer', 'layout', 'svg'].map((m) => [`${m}Ms`, Math.round(performance.getEntriesByName(`colline:${m}`).at(-1)?.duration ?? NaN)])),
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
