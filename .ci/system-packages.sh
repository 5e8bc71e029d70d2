#!/usr/bin/env bash
# Debian's Chromium (browser tests, through playwright-core) and PgBouncer (pooler tests and passes), installed when
# missing and this is root; without them those tests fail under CI rather than skip.
set -uo pipefail
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v pgbouncer >/dev/null 2>&1 || [ -x /usr/sbin/pgbouncer ] || missing+=(pgbouncer)
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null; } ||
      echo "could not install ${missing[*]} from Debian's packages: the tests that need them will fail"
  else
    echo "missing and not root: ${missing[*]} (apt-get install -y ${missing[*]}); the tests that need them will fail"
  fi
fi
/usr/bin/chromium --version 2>/dev/null || echo "chromium: not installed"
/usr/sbin/pgbouncer --version 2>/dev/null | head -1 || echo "pgbouncer: not installed"
exit 0
