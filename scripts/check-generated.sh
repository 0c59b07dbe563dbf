#!/bin/sh
# Runs every generator again (fetching a missing Go generator through the
# module proxy) and fails when a
# generated file changed or appeared: the generated files are committed, so
# a stale one is a bug that make test must catch. The working tree before
# and after is compared (not HEAD), so a generated file regenerated but not
# yet committed is not drift. Under CI a generator whose tool is missing
# fails the check instead of being left out.
set -eu
GO=${GO:-go}
MAKE=${MAKE:-make}
export GO

# Every path a generator writes; the directories also hold hand-written
# files, which no generator touches.
paths="api README.md PROTOCOL.md plugins/proto plugins/python/README.md plugins/typescript/README.md
plugins/python/src/hookhost_plugin/_proto plugins/python/src/hookhost_plugin/_catalogue.py
plugins/python/src/hookhost_plugin/_testing_catalogue.py plugins/sdk/plugintest/hooks_gen.go
internal/conformance/goconform/hooks_gen.go plugins/sdk/hooks_gen.go
examples/python-plugin/plugin_pb2.py internal/conformance/fromdoc/python
plugins/typescript/proto plugins/typescript/src/generated"

before=$(mktemp -d)
trap 'rm -rf "$before"' EXIT
# shellcheck disable=SC2086
tar -cf "$before/tree.tar" $paths

ran="make generate, make api"
left=""
leave() { # what, how to install it
	if [ -n "${CI:-}" ]; then
		echo "check-generated: $1 cannot be regenerated: $2" >&2
		exit 1
	fi
	left="$left
  $1: $2"
}

"$MAKE" -s --no-print-directory generate api >/dev/null

if command -v protoc >/dev/null; then
	"$MAKE" -s --no-print-directory proto-python >/dev/null
	ran="$ran, the Python protobuf code"
	# The Go generators are installed from the module cache alone (a file
	# proxy over it; what is there was verified when it was downloaded), so
	# without the network they are there only if make proto ran once.
	# A fresh machine (CI) has them only after one fetch through the
	# module proxy, which is tried next.
	cache="$("$GO" env GOMODCACHE)/cache/download"
	if GOPROXY="file://$cache" GOSUMDB=off "$MAKE" -s --no-print-directory proto-go >"$before/proto-go.log" 2>&1; then
		ran="$ran, the Go protobuf code"
	elif "$MAKE" -s --no-print-directory proto-go >>"$before/proto-go.log" 2>&1; then
		ran="$ran, the Go protobuf code"
	else
		leave "the Go protobuf code" "protoc-gen-go and protoc-gen-go-grpc are not in the module cache (make proto fetches them)"
	fi
else
	leave "the Go and Python protobuf code" "protoc not found (apt-get install protobuf-compiler)"
fi

if [ -x plugins/typescript/node_modules/.bin/proto-loader-gen-types ]; then
	"$MAKE" -s --no-print-directory proto-typescript >/dev/null
	ran="$ran, the TypeScript protobuf types"
else
	leave "the TypeScript protobuf types" "proto-loader-gen-types not installed (make typescript, which needs Node 20+ and npm)"
fi

mkdir "$before/tree"
tar -xf "$before/tree.tar" -C "$before/tree"
drift=0
for p in $paths; do
	if ! diff -ruN "$before/tree/$p" "$p" >"$before/diff" 2>&1; then
		drift=1
		cat "$before/diff"
	fi
done
if [ "$drift" = 1 ]; then
	echo "check-generated: the files above were stale and are now regenerated from their sources ($ran); commit them" >&2
	exit 1
fi
echo "check-generated: no drift ($ran)"
if [ -n "$left" ]; then
	echo "check-generated: left out (under CI this fails):$left"
fi
