#!/usr/bin/env bash
# Fails when Linux-only code (Landlock, namespaces, mounts, Linux system calls) sits in
# a Rust module that is not declared under `#[cfg(target_os = "linux")]`, so rein keeps
# building on other systems (where the shell runs only with `--sandbox off`).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
pattern='(^|[^_[:alnum:]])landlock::|libc::unshare|CLONE_NEW|libc::mount\(|MS_BIND|SYS_landlock|SYS_mount_setattr|PR_SET_NO_NEW_PRIVS'
status=0
while IFS= read -r file; do
  dir=$(dirname "$file")
  name=$(basename "$file" .rs)
  # The file's module is declared in lib.rs, main.rs or mod.rs of its directory (or,
  # for dir/mod.rs, in its parent): the line before `mod NAME;` must be the cfg.
  if [ "$name" = mod ]; then
    name=$(basename "$dir")
    dir=$(dirname "$dir")
  fi
  declared=no
  for parent in "$dir/lib.rs" "$dir/main.rs" "$dir/mod.rs" "$dir.rs"; do
    [ -f "$parent" ] || continue
    if grep -B1 -E "^(pub(\(crate\))? )?mod $name;" "$parent" | grep -qF '#[cfg(target_os = "linux")]'; then
      declared=yes
    fi
  done
  if [ "$declared" = no ]; then
    echo "check-linux-gating: $file uses Linux-only APIs but its module is not under #[cfg(target_os = \"linux\")]:" >&2
    grep -nE "$pattern" "$file" | head -3 >&2
    status=1
  fi
done < <(grep -rlE "$pattern" --include=*.rs crates src tests | sort)
if ! grep -A1 "^\[target.'cfg(target_os = \"linux\")'.dependencies\]" crates/tools/Cargo.toml | grep -q '^landlock'; then
  echo "check-linux-gating: landlock must be a Linux-only dependency of crates/tools" >&2
  status=1
fi
[ "$status" -eq 0 ] && echo "check-linux-gating: Linux-only code is gated"
exit "$status"
