#!/usr/bin/env bash
# Builds the release archives: for each target, static binaries of hookhost
# and the plugins that ship, packed with the licence, README, changelog and
# example config as
#   dist/hookhost_<version>_<os>_<arch>.tar.gz
# holding hookhost_<version>_<os>_<arch>/bin/hookhost, bin/plugins/<name>
# (where the default plugins.dir finds them), the documents, and
# THIRD_PARTY_LICENSES (the licence and NOTICE files of every module linked
# in, which their terms ask a binary distribution to carry), then
# dist/SHA256SUMS over the archives.
#
# Settings (environment):
#   VERSION           the version stamped in (default: scripts/version.sh)
#   RELEASE_TARGETS   os/arch pairs (default: linux and darwin, amd64 and arm64)
#   RELEASE_COMMANDS  packages to build (default: cmd/hookhost plugins/kora;
#                     the plugins under examples/ are examples, not shipped)
#   DIST              output directory (default: dist), emptied first
#   GO                the go command (default: go)
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
VERSION=${VERSION:-$(scripts/version.sh)}
RELEASE_TARGETS=${RELEASE_TARGETS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64}
RELEASE_COMMANDS=${RELEASE_COMMANDS:-cmd/hookhost plugins/kora}
DIST=${DIST:-dist}
DOCS="LICENSE README.md CHANGELOG.md config.toml.example"
case $DIST in
"" | / | .) echo "release: DIST=$DIST would be emptied; name a directory of its own" >&2; exit 1 ;;
esac

commit=$(git rev-parse --short=7 HEAD 2>/dev/null || true)
if [ -n "$commit" ] && [ -n "$(git status --porcelain --untracked-files=no)" ]; then
	commit="$commit-dirty"
fi
ldflags="-s -w -X main.version=$VERSION -X main.commit=$commit"

for doc in $DOCS; do
	[ -f "$doc" ] || { echo "release: $doc is missing" >&2; exit 1; }
done

# Archives with the same contents are the same bytes: sorted names, no
# owners, every file dated at the commit (GNU tar; other tars pack plainly).
tarflags=()
if tar --version 2>/dev/null | grep -q 'GNU tar'; then
	when=$(git show -s --format=%ct HEAD 2>/dev/null || date +%s)
	tarflags=(--sort=name --owner=0 --group=0 --numeric-owner --mtime="@$when")
fi

# third_party prints the licence and NOTICE files of the modules the
# commands link for one target.
third_party() {
	local pkgs=() path version dir f found
	for pkg in $RELEASE_COMMANDS; do pkgs+=("./$pkg"); done
	echo "The Go modules linked into these binaries, each with its licence and"
	echo "NOTICE files. Each one's source is at its path and version, from the Go"
	echo "module proxy (go mod download <path>@<version>) or https://pkg.go.dev."
	echo
	printf '%s\n%s: LICENSE\n\n' "------------------------------------------------------------------------" "Go standard library $("$GO" env GOVERSION)"
	cat "$("$GO" env GOROOT)/LICENSE"
	printf '\n'
	CGO_ENABLED=0 GOOS=$1 GOARCH=$2 "$GO" list -deps \
		-f '{{with .Module}}{{if not .Main}}{{.Path}} {{.Version}} {{.Dir}}{{end}}{{end}}' "${pkgs[@]}" |
		sort -u |
		while read -r path version dir; do
			found=
			for f in "$dir"/LICENSE* "$dir"/LICENCE* "$dir"/COPYING* "$dir"/NOTICE*; do
				[ -f "$f" ] || continue
				found=1
				printf '%s\n%s %s: %s\n\n' "------------------------------------------------------------------------" "$path" "$version" "${f##*/}"
				cat "$f"
				printf '\n'
			done
			[ -n "$found" ] || echo "release: warning: $path $version has no licence file" >&2
		done
}

rm -rf "$DIST"
mkdir -p "$DIST"
for target in $RELEASE_TARGETS; do
	goos=${target%/*}
	goarch=${target#*/}
	name="hookhost_${VERSION}_${goos}_${goarch}"
	stage="$DIST/$name"
	mkdir -p "$stage/bin/plugins"
	for pkg in $RELEASE_COMMANDS; do
		out="$stage/bin/plugins/$(basename "$pkg")"
		[ "$pkg" = cmd/hookhost ] && out="$stage/bin/hookhost"
		echo "build $pkg ($goos/$goarch) -> $out"
		CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch "$GO" build -trimpath -ldflags "$ldflags" -o "$out" "./$pkg"
	done
	cp $DOCS "$stage/"
	third_party "$goos" "$goarch" >"$stage/THIRD_PARTY_LICENSES"
	# ${a[@]+...}: bash 3.2 (macOS) calls an empty array unbound under set -u.
	tar ${tarflags[@]+"${tarflags[@]}"} -C "$DIST" -cf - "$name" | gzip -n -9 >"$DIST/$name.tar.gz"
	rm -rf "$stage"
done

(
	cd "$DIST"
	if command -v sha256sum >/dev/null; then
		sha256sum -- *.tar.gz >SHA256SUMS
	else
		shasum -a 256 -- *.tar.gz >SHA256SUMS
	fi
)
echo "release $VERSION in $DIST:"
cat "$DIST/SHA256SUMS"
