#!/usr/bin/env bash
# Installs what building rein needs on a fresh Debian/Ubuntu machine: cmake, a C/C++
# compiler and libclang (llama.cpp and its bindings), python3 with pip (model pulls)
# and venv (the openai client test), and a TrueType font (labels of `rein eval` plots).
# Does nothing when everything is present.
set -euo pipefail

missing=()
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
command -v g++ >/dev/null 2>&1 || missing+=(g++)
command -v clang >/dev/null 2>&1 || missing+=(clang)
if ! ldconfig -p 2>/dev/null | grep -q 'libclang[-.0-9]*\.so' && ! ls /usr/lib/llvm-*/lib/libclang*.so* >/dev/null 2>&1; then
  missing+=(libclang-dev)
fi
command -v python3 >/dev/null 2>&1 || missing+=(python3)
python3 -m pip --version >/dev/null 2>&1 || missing+=(python3-pip)
python3 -c "import venv, ensurepip" >/dev/null 2>&1 || missing+=(python3-venv)
# One of the fonts the eval plots use is enough.
has_font() {
  local font
  for font in /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf /usr/share/fonts/TTF/DejaVuSans.ttf \
      /usr/share/fonts/dejavu/DejaVuSans.ttf /usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf; do
    [ -f "$font" ] && return 0
  done
  return 1
}
if [ -z "${REIN_FONT:-}" ] && ! has_font; then
  missing+=(fonts-dejavu-core)
fi

if ! command -v cargo >/dev/null 2>&1; then
  echo "rein setup: cargo is not installed; install Rust (rustup) first." >&2
  exit 1
fi

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "rein setup: installing ${missing[*]}" >&2
if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1; then
  sudo=(sudo)
else
  echo "rein setup: missing ${missing[*]}; install them (as root: apt-get install ${missing[*]})" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "rein setup: missing ${missing[*]} and apt-get is not available; install them with your package manager" >&2
  exit 1
fi
"${sudo[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
