#!/usr/bin/env bash
# deploy/browser/screenshot.sh OUT.png: screenshot one lineage query in Neo4j Browser with headless
# Chromium (Debian's /usr/bin/chromium; playwright-core from npm into .cache/node). Neo4j must run
# with data in it: `make screenshot` starts it and loads the captured skeleton run first.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
NODE_DIR=$REPO/.cache/node
PLAYWRIGHT_VERSION=1.65.1
if [[ ! -d $NODE_DIR/node_modules/playwright-core ]] ||
   [[ $(node -p "require('$NODE_DIR/node_modules/playwright-core/package.json').version") != "$PLAYWRIGHT_VERSION" ]]; then
  npm install --prefix "$NODE_DIR" --no-audit --no-fund --silent "playwright-core@$PLAYWRIGHT_VERSION"
fi
command -v "${COLLINE_CHROMIUM:-/usr/bin/chromium}" >/dev/null ||
  { echo "screenshot: no Chromium; apt-get install -y chromium" >&2; exit 1; }
PLAYWRIGHT_CORE=$NODE_DIR/node_modules/playwright-core exec node "$REPO/deploy/browser/screenshot.cjs" "${1:-$REPO/docs/img/browser-upstream.png}"
