#!/usr/bin/env bash
# Released migrations are never edited: every file under prisma/migrations at the previous release
# (.ci/previous-release, a commit of this repository's history) must exist here byte for byte. A database that
# applied the released text would otherwise refuse to start (checksum mismatch) or differ from the schema.
# Needs a clone with that commit (CI clones main in full). Usage: .ci/check-released-migrations.sh
set -euo pipefail
cd "$(dirname "$0")/.."
rev="$(tr -d '[:space:]' < .ci/previous-release)"
if ! git cat-file -e "${rev}^{commit}" 2>/dev/null; then
  echo "previous release ${rev} is not in this clone: fetch the full history (git fetch --unshallow)" >&2
  exit 1
fi
checked=0
failed=0
while IFS= read -r file; do
  checked=$((checked + 1))
  if [ ! -f "$file" ]; then
    echo "released migration file removed: $file" >&2
    failed=1
  elif ! git show "${rev}:${file}" | cmp -s - "$file"; then
    echo "released migration file edited: $file (compare: git diff ${rev} -- $file)" >&2
    failed=1
  fi
done < <(git ls-tree -r --name-only "$rev" -- prisma/migrations)
if [ "$failed" = 1 ]; then
  echo "Never edit a released migration: add a new one instead (README, Schema changes)." >&2
  exit 1
fi
echo "released migrations unchanged: ${checked} files of ${rev:0:7}"
