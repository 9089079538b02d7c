// Debian's Chromium (dev/chromium installs it) for colline's browser tests, screenshots and the
// bench's UI part, driven by playwright-core: headless, a fresh profile each time, and the flags
// this closed network needs (without the background-networking ones Chromium keeps calling
// Google's hosts). COLLINE_CHROMIUM names the binary (default /usr/bin/chromium).
const fs = require('fs');
const os = require('os');
const path = require('path');
const { chromium } = require('playwright-core');

/** Launches Chromium; returns its context, its first page and close(), which removes the profile. */
async function launch(viewport = { width: 1400, height: 860 }) {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'colline-chromium-'));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.COLLINE_CHROMIUM || '/usr/bin/chromium',
    headless: true,
    viewport,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
  const page = ctx.pages()[0] || await ctx.newPage();
  return {
    ctx,
    page,
    close: async () => {
      await ctx.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

module.exports = { launch };
