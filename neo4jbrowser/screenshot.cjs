// Screenshot of Neo4j Browser with colline's style and guide, driven in headless Chromium by
// playwright-core: connect (Browser then runs browser.post_connect_cmd: colline's style and
// guide), run query 2 of the guide (upstream of a column, as a graph) and check what is drawn:
// columns captioned table.column, relationships captioned with their type and subtype.
//
//   node neo4jbrowser/screenshot.cjs OUT.png      (neo4jbrowser/screenshot.sh sets it up)
//
// Environment: COLLINE_BROWSER_URL (default http://127.0.0.1:17474/browser/), COLLINE_BOLT_URL
// (bolt://127.0.0.1:17687, no authentication), COLLINE_CHROMIUM (/usr/bin/chromium),
// COLLINE_COLUMN (the column whose upstream is shown).
const path = require('path');
const fs = require('fs');
const chromium = require('../ui/web/chromium.cjs');

const out = process.argv[2] || 'docs/img/browser-upstream.png';
const port = (v, d) => process.env[v] || d;
const browserURL = process.env.COLLINE_BROWSER_URL || `http://127.0.0.1:${port('COLLINE_NEO4J_HTTP_PORT', 17474)}/browser/`;
const bolt = process.env.COLLINE_BOLT_URL || `bolt://127.0.0.1:${port('COLLINE_NEO4J_BOLT_PORT', 17687)}`;
const column = process.env.COLLINE_COLUMN || 'spark_catalog/shop.top_countries#revenue';
const query = fs.readFileSync(path.join(__dirname, 'queries', '02-upstream-graph.cypher'), 'utf8');

(async () => {
  const browser = await chromium.launch({ width: 1600, height: 1000 });
  try {
    const { page } = browser;
    page.setDefaultTimeout(90000);
    await page.goto(`${browserURL}?connectURL=${encodeURIComponent(bolt)}&preselectAuthMethod=NO_AUTH`);
    const connected = page.getByText(/You are connected as|Connected to Neo4j/i).first();
    const connect = page.getByRole('button', { name: /^connect$/i });
    await connected.or(connect).first().waitFor();
    if (!(await connected.isVisible())) {
      await connect.click();
      await connected.waitFor();
    }
    // browser.post_connect_cmd: the style frame and the guide in the sidebar
    await page.getByText('colline: column lineage in this graph').first().waitFor();
    const banner = page.getByText(/we collect information on product usage/i);
    if (await banner.isVisible()) {
      await banner.locator('xpath=..').locator('button, [role=button], svg').last().click().catch(() => {});
    }
    const editor = page.locator('#monaco-main-editor textarea, [data-testid="activeEditor"] textarea').first();
    const run = async (cmd) => {
      await editor.click();
      await page.keyboard.press('Control+A');
      await page.keyboard.press('Delete');
      await page.keyboard.insertText(cmd);
      await page.keyboard.press('Control+Enter');
      await page.waitForTimeout(1500);
    };
    await run(':clear');
    await run(`:param column => '${column}'`);
    await run(':clear');
    await run(query);
    await page.locator('svg g.node').first().waitFor();
    // the result frame to full screen, the node/relationship overview closed
    await page.locator('[title="Fullscreen"], [aria-label="Fullscreen"], [data-testid="fullscreenButton"]').last().click().catch(() => {});
    await page.waitForTimeout(5000); // the force layout settles
    // zoom in with the wheel over the graph's centre (the fullscreen frame fits it small)
    const box = await page.locator('svg.neod3viz, svg').filter({ has: page.locator('g.node') }).first().boundingBox();
    if (box) {
      await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
      for (let i = 0; i < 4; i++) {
        await page.mouse.wheel(0, -120);
        await page.waitForTimeout(150);
      }
      await page.waitForTimeout(1000);
    }

    fs.mkdirSync(path.dirname(out), { recursive: true });
    await page.screenshot({ path: out });
    const nodes = await page.locator('svg g.node').count();
    const captions = await page.locator('svg g.node text, svg g.relationship text').allTextContents();
    // Browser cuts a caption that does not fit its circle or arrow with an ellipsis
    const want = ['shop.top_countries.revenue', 'shop.country_revenue.revenue', 'shop.orders.amount', 'DIRECT IDENTITY', 'DIRECT AGGREGATION', 'INDIRECT/FILTER'];
    const fits = (c, w) => { c = c.trim(); return c === w || (c.endsWith('…') && w.startsWith(c.slice(0, -1)) && c.length > 8); };
    const missing = want.filter((w) => !captions.some((c) => fits(c, w)));
    console.log(`screenshot: ${out} (${nodes} nodes; captions ${[...new Set(captions)].slice(0, 12).join(' | ')})`);
    if (nodes === 0 || missing.length) {
      console.error(`screenshot: missing captions: ${missing.join(', ')}`);
      process.exitCode = 1;
    }
  } finally {
    await browser.close();
  }
})().catch((e) => { console.error('screenshot:', e.message); process.exit(1); });
