#!/usr/bin/env bash
# The results page in a real browser: builds a site from the fixture sittings
# and runs site.test.mjs (node's test runner) against it in Debian's chromium
# through playwright-core. Exit 77 (ctest: SKIPPED) when node, chromium or the
# npm packages (lab/site, npm ci) are missing.
#   run.sh BENCH_RUN LAB_SITE_FIXTURES WORK_DIR
set -euo pipefail
bench_run=$1 fixtures=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
site_pkg=$(cd "$here/../../lab/site" && pwd)
chromium=${KITE_CHROMIUM:-/usr/bin/chromium}

skip() { echo "SKIPPED: $*"; exit 77; }
command -v node >/dev/null || skip "node is not on PATH (scripts/install-deps.sh installs it)"
[[ -x $chromium ]] || skip "no chromium at $chromium (scripts/install-deps.sh installs Debian's)"
[[ -d $site_pkg/node_modules/playwright-core ]] || skip "lab/site/node_modules has no playwright-core (the build runs npm ci there)"

rm -rf "$work"
mkdir -p "$work/screenshots"
"$fixtures" "$work/results"
"$bench_run" site --results "$work/results" >/dev/null
export KITE_SITE_RESULTS="$work/results" KITE_SITE_SHOTS="$work/screenshots" KITE_BENCH_RUN="$bench_run"
export KITE_CHROMIUM="$chromium" KITE_SITE_PKG="$site_pkg"
cd "$work"
node --test --test-concurrency=1 "$here/site.test.mjs"
echo "screenshots: $work/screenshots"
