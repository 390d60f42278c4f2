#!/usr/bin/env bash
# One case of the Layers.* tests: preprocesses a one-line source, `#include "HEADER"`, with the include path a
# layer's sources compile with, and checks that it is found (expect pass) or refused as missing (expect fail).
#   include_probe.sh CXX HEADER pass|fail INCLUDE_DIR...
set -uo pipefail
cxx=$1 header=$2 expect=$3
shift 3
flags=()
for d in "$@"; do flags+=("-I$d"); done
err=$(printf '#include "%s"\n' "$header" | "$cxx" -std=c++20 -E -x c++ - "${flags[@]}" -o /dev/null 2>&1)
status=$?
if [[ $expect == pass && $status -eq 0 ]]; then exit 0; fi
if [[ $expect == fail && $status -ne 0 && $err == *"$header: No such file"* ]]; then exit 0; fi
echo "include_probe: #include \"$header\" with this layer's include path: expected $expect, got status $status" >&2
echo "$err" | head -5 >&2
exit 1
