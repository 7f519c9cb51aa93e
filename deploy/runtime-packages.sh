#!/bin/bash
# Prints, one per line, the Debian packages that own the shared libraries the given
# programs load (ldd), so the runtime image installs exactly those.
# Usage: deploy/runtime-packages.sh PROGRAM...   Fails if a library has no package.
set -euo pipefail
libs=$(ldd "$@" | awk '/=>/ && $3 ~ /^\// {print $3}' | sort -u)
for lib in $libs; do
  # bookworm registers some libraries under /lib, others under /usr/lib (merged /usr).
  owner=""
  for candidate in "$lib" "$(readlink -f "$lib")" "/usr${lib}" "${lib#/usr}"; do
    if owner=$(dpkg-query -S "$candidate" 2>/dev/null); then break; fi
  done
  if [[ -z "$owner" ]]; then
    echo "runtime-packages: no Debian package owns $lib" >&2
    exit 1
  fi
  echo "${owner%%:*}"
done | sed 's/:[a-z0-9]*$//' | sort -u
