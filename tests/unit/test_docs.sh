#!/usr/bin/env bash
# The documents that map the source must stay true: every repository path
# that docs/ARCHITECTURE.md and README.md name in backticks (src/..., tests/...,
# a top-level file such as CMakeLists.txt) exists.
#   bash tests/unit/test_docs.sh REPO_ROOT
set -euo pipefail
root=${1:?usage: test_docs.sh REPO_ROOT}
missing=0
checked=0
for doc in docs/ARCHITECTURE.md README.md; do
    [ -f "$root/$doc" ] || { echo "missing document: $doc"; missing=$((missing + 1)); continue; }
    # Backticked words that look like repository paths: a known top folder
    # followed by a path, or a file at the top (name.ext).
    while IFS= read -r path; do
        checked=$((checked + 1))
        if [ ! -e "$root/$path" ]; then
            echo "$doc names $path, which does not exist"
            missing=$((missing + 1))
        fi
    done < <(grep -o '`[^`]*`' "$root/$doc" | tr -d '`' |
             grep -E '^((src|include|tests|tools|python|bench|dev|docs|cmake)/[A-Za-z0-9_./-]*[A-Za-z0-9_]|CMakeLists\.txt|README\.md|Makefile)$' |
             grep -v '[<>*]' | sort -u)
done
echo "test_docs: $checked paths checked, $missing missing"
[ "$checked" -gt 20 ] || { echo "test_docs: too few paths found; is the pattern still right?"; exit 1; }
[ "$missing" -eq 0 ]
