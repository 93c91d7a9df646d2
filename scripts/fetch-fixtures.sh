#!/usr/bin/env bash
# Fetches the canitoolcall conformance fixtures (the pinned wheel, verified by sha256)
# into rein's cache and unpacks them; the rein-format conformance test reads them.
# A no-op when they are already there.
set -euo pipefail
version="0.1.1"
sha256="a8a0ea82584cfdb00e737f2853d20fb5f233002aeb961ba735f574a225eceb15"
wheel="canitoolcall-${version}-py3-none-any.whl"
dir="${REIN_FIXTURES_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/rein/fixtures}"
target="$dir/canitoolcall-${version}"
if [ -f "$target/.complete" ]; then
  exit 0
fi
mkdir -p "$dir"
if [ ! -f "$dir/$wheel" ]; then
  python3 -m pip download --quiet --no-deps --only-binary=:all: "canitoolcall==${version}" -d "$dir"
fi
echo "$sha256  $dir/$wheel" | sha256sum --check --quiet - || {
  echo "fetch-fixtures: $wheel does not match its sha256; removing it" >&2
  rm -f "$dir/$wheel"
  exit 1
}
rm -rf "$target"
python3 -m zipfile -e "$dir/$wheel" "$target"
touch "$target/.complete"
echo "fetch-fixtures: canitoolcall ${version} fixtures in $target"
