#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Puts an SPDX licence line at the top of every tracked source file that lacks one (after the
# shebang of a script). Files with uncommitted changes are left alone, so someone's work in
# progress is never mixed into the commit of these lines: they are listed, to run this again later.
#   scripts/add-spdx.sh     prints the files it changed; the skipped ones go to stderr
set -eu
cd "$(dirname "$0")/.."
spdx="SPDX-License-Identifier: Apache-2.0"

git ls-files -- '*.cpp' '*.hpp' '*.h' '*CMakeLists.txt' '*.cmake' '*.sh' .ci/run | while read -r file; do
  [ -f "$file" ] || continue
  head -n 3 "$file" | grep -q "SPDX-License-Identifier" && continue
  if ! git diff --quiet -- "$file" || ! git diff --cached --quiet -- "$file"; then
    echo "skipped (uncommitted changes): $file" >&2
    continue
  fi
  case "$file" in
    *.cpp | *.hpp | *.h) line="// $spdx" ;;
    *) line="# $spdx" ;;
  esac
  if head -n 1 "$file" | grep -q '^#!'; then
    { head -n 1 "$file"; echo "$line"; tail -n +2 "$file"; } >"$file.spdx"
  else
    { echo "$line"; cat "$file"; } >"$file.spdx"
  fi
  chmod --reference="$file" "$file.spdx"
  mv "$file.spdx" "$file"
  echo "$file"
done
git ls-files --others --exclude-standard -- '*.cpp' '*.hpp' '*.h' '*CMakeLists.txt' '*.cmake' '*.sh' |
  sed 's/^/skipped (not committed yet): /' >&2
