#!/usr/bin/env bash
# Installs what building rein needs on a fresh Debian/Ubuntu machine: cmake, a C/C++
# compiler and libclang (llama.cpp and its bindings), python3 with pip (model pulls)
# and venv (the openai client test), a TrueType font (labels of `rein eval` plots), and
# Node with npm for the pinned MCP reference servers the tests talk to (installed into
# tests/mcp-servers/node_modules), and tmux (the tests drive `rein chat`'s session in a
# real terminal). Does nothing when everything is present.
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
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
command -v tmux >/dev/null 2>&1 || missing+=(tmux)

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# The MCP test servers, exactly as package-lock.json pins them; again only when the
# lock changed since the last install.
install_mcp_servers() {
  local dir="$root/tests/mcp-servers"
  if [ -f "$dir/node_modules/.package-lock.json" ] && [ "$dir/node_modules/.package-lock.json" -nt "$dir/package-lock.json" ]; then
    return 0
  fi
  echo "rein setup: installing the MCP test servers (npm ci in tests/mcp-servers)" >&2
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
}

if ! command -v cargo >/dev/null 2>&1; then
  echo "rein setup: cargo is not installed; install Rust (rustup) first." >&2
  exit 1
fi

if [ ${#missing[@]} -eq 0 ]; then
  install_mcp_servers
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
install_mcp_servers
