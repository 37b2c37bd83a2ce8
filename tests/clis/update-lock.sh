#!/usr/bin/env bash
# Regenerate package-lock.json after changing a pin in package.json.
# The registry reachable here serves only some per-platform optional packages
# (e.g. opencode-darwin-arm64 is absent); npm records their parents' edges but
# no entries, which makes `npm ci` reject the lockfile. prune-lock.js drops
# those dangling optional edges so `npm ci` works.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
npm install --package-lock-only --no-audit --no-fund
node prune-lock.js package-lock.json
