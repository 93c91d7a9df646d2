#!/usr/bin/env bash
# The README's first command: an agent (`rein run`, default model, offline once the
# model is cached) finds every TODO comment in the example workspace examples/todo and
# writes them into TODO.md. The run works on a copy; the result is graded from the
# file it leaves. Extra arguments go to `rein run` (e.g. --model small, --json).
#
# `scripts/demo.sh --generated SEED [ARGS…]` runs the same request on a workspace
# generated from SEED instead (`rein eval todo-workspace`: TODO comments in the comment
# syntax of other languages and file types, at several depths, beside comments with
# other markers), graded the same way, and also fails if another marker's comment is
# listed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/rein-demo.XXXXXX")"
expected="$root/examples/todo.expected"
absent=/dev/null
if [ "${1:-}" = "--generated" ]; then
  seed="${2:?--generated needs a seed}"
  shift 2
  lists="$(mktemp -d "${TMPDIR:-/tmp}/rein-demo-lists.XXXXXX")"
  expected="$lists/expected"
  absent="$lists/absent"
  "$root/scripts/rein" eval todo-workspace --seed "$seed" "$work" \
    --expected "$expected" --absent "$absent"
  echo "generated workspace of seed $seed: $(cd "$work" && find . -type f | sort | tr '\n' ' ')" >&2
else
  cp -R "$root/examples/todo/." "$work/"
fi
echo "workspace: $work" >&2
"$root/scripts/rein" run --workdir "$work" "$@" \
  "Find every TODO comment in the files of this workspace and write them all into a new file TODO.md, one per line, as path:line: text."
# `path:line` as a pattern that ends where the line number ends (src/a.js:3 is not src/a.js:31).
pattern() { printf '%s' "$1" | sed 's/[][\\.*^$+?(){}|]/\\&/g'; }
missing=0
while IFS= read -r line; do
  if ! grep -qE -- "$(pattern "$line")([^0-9]|\$)" "$work/TODO.md" 2>/dev/null; then
    echo "missing from TODO.md: $line" >&2
    missing=$((missing + 1))
  fi
done < "$expected"
extra=0
while IFS= read -r line; do
  if grep -qE -- "(^|[^[:alnum:]/._-])$(pattern "$line")([^0-9]|\$)" "$work/TODO.md" 2>/dev/null; then
    echo "not a TODO comment, listed in TODO.md: $line" >&2
    extra=$((extra + 1))
  fi
done < "$absent"
if [ "$missing" -eq 0 ] && [ "$extra" -eq 0 ]; then
  echo "graded: TODO.md lists every TODO (file and line)" >&2
else
  echo "graded: $missing TODO(s) missing from TODO.md, $extra other comment(s) listed" >&2
  exit 1
fi
