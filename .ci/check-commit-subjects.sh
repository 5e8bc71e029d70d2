#!/usr/bin/env bash
# Commit subjects of at most 72 characters (CONTRIBUTING.md, Commits), for every commit after the one named in
# .ci/commit-subjects-since: the older history is kept as it was written.
set -euo pipefail
cd "$(dirname "$0")/.."
since="$(tr -d '[:space:]' < .ci/commit-subjects-since)"
if ! git cat-file -e "${since}^{commit}" 2>/dev/null; then
  echo "commit ${since} is not in this clone: fetch the full history (git fetch --unshallow)" >&2
  exit 1
fi
long="$(git log --no-merges --format='%h %s' "${since}..HEAD" | awk '{ s = $0; sub(/^[^ ]+ /, "", s) } length(s) > 72')"
if [ -n "$long" ]; then
  echo "commit subjects over 72 characters (reword them before they land):" >&2
  echo "$long" >&2
  exit 1
fi
echo "commit subjects within 72 characters: $(git rev-list --no-merges --count "${since}..HEAD") commits since ${since:0:7}"
