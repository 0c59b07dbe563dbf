#!/bin/sh
# Prints the version make build and make release stamp into hookhost, a
# semantic version from git:
#   v0.1.0                              on the commit tagged v0.1.0
#   v0.1.0-3-g1a2b3c4                   three commits after it (git describe)
#   v0.0.0-20261127050000-1a2b3c4d5e6f  before the first vMAJOR.MINOR.PATCH tag:
#                                       the commit's UTC time and hash, as a Go
#                                       pseudo-version
# with -dirty appended when tracked files have uncommitted changes, and
# v0.0.0-unknown outside a git checkout.
set -eu
cd "$(dirname "$0")/.."
if ! git rev-parse -q --verify HEAD >/dev/null 2>&1; then
	echo v0.0.0-unknown
	exit 0
fi
if git describe --tags --match 'v[0-9]*.[0-9]*.[0-9]*' --dirty 2>/dev/null; then
	exit 0
fi
dirty=
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
	dirty=-dirty
fi
when=$(TZ=UTC git show -s --format=%cd --date=format-local:%Y%m%d%H%M%S HEAD)
echo "v0.0.0-$when-$(git rev-parse --short=12 HEAD)$dirty"
