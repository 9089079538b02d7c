#!/usr/bin/env bash
# neo4jbrowser/screenshot.sh OUT.png: screenshot Neo4j Browser with colline's style and guide (loaded by
# Browser at connect, from colline ui: dev/services sets Neo4j up so) showing query 2, the upstream
# of shop.top_countries.revenue, in headless Chromium (dev/chromium; playwright-core from
# ui/web's lockfile). `make screenshot` starts Neo4j and the explorer and loads the captured
# skeleton run first.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
chromium=$("$REPO/dev/chromium")
[[ -d $REPO/ui/web/node_modules/playwright-core ]] || { echo "screenshot: run make ui-bundle first (npm ci in ui/web)" >&2; exit 1; }
COLLINE_CHROMIUM=$chromium exec node "$REPO/neo4jbrowser/screenshot.cjs" "${1:-$REPO/docs/img/browser-upstream.png}"
