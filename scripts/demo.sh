#!/usr/bin/env bash
# The README's first command: an agent (`rein run`, default model, offline once the
# model is cached) finds every TODO comment in the example workspace examples/todo and
# writes them into TODO.md. The run works on a copy; the result is graded from the
# file it leaves. Extra arguments go to `rein run` (e.g. --model small, --json).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/rein-demo.XXXXXX")"
cp -R "$root/examples/todo/." "$work/"
echo "workspace: $work" >&2
"$root/scripts/rein" run --workdir "$work" "$@" \
  "Find every TODO comment in the files of this workspace and write them all into a new file TODO.md, one per line, as path:line: text."
missing=0
while IFS= read -r expected; do
  if ! grep -qF -- "$expected" "$work/TODO.md" 2>/dev/null; then
    echo "missing from TODO.md: $expected" >&2
    missing=$((missing + 1))
  fi
done < "$root/examples/todo.expected"
if [ "$missing" -eq 0 ]; then
  echo "graded: TODO.md lists every TODO (file and line)" >&2
else
  echo "graded: $missing TODO(s) missing from TODO.md" >&2
  exit 1
fi
