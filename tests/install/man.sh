#!/usr/bin/env bash
# man.sh BUILD_DIR SOURCE_DIR: what `make install DESTDIR=...` puts beside the library.
# `cmake --install` with DESTDIR into a scratch directory, then: the tool is there and
# runs; every docs/perfkit*.md has its page in share/man/man1, which `man -l` renders
# with a NAME section (and groff finds nothing wrong in it but unbreakable words in table
# cells); `man` finds the pages through MANPATH; the bash completion, sourced, completes
# `perfkit rec<TAB>` and `perfkit record --call<TAB>`; the zsh completion parses;
# `perfkit help record` shows the page on a terminal and the usage text into a pipe.
set -u
build=$(realpath "$1") src=$(realpath "$2")
command -v man >/dev/null && command -v groff >/dev/null ||
	{ echo "man or groff is not installed" >&2; exit 77; }
[ -d "$build/man/man1" ] || { echo "the build made no man pages (PK_MAN=OFF?)" >&2; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pk-man.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

DESTDIR=$tmp/dest cmake --install "$build" --prefix /opt/pk > "$tmp/install.log" 2>&1 ||
	{ cat "$tmp/install.log"; fail "cmake --install with DESTDIR"; }
root=$tmp/dest/opt/pk
[ -x "$root/bin/perfkit" ] || fail "no bin/perfkit under DESTDIR"
"$root/bin/perfkit" --version | grep -q '^perfkit ' || fail "the installed perfkit does not run"
n=0
for md in "$src"/docs/perfkit*.md; do
	page=$(basename "$md" .md)
	f=$root/share/man/man1/$page.1
	[ -f "$f" ] || fail "$page.1 is not installed"
	MANWIDTH=80 man -l "$f" > "$tmp/page.txt" 2> "$tmp/man.err" || { cat "$tmp/man.err"; fail "man -l $page.1"; }
	grep -q '^NAME' "$tmp/page.txt" || fail "$page.1 has no NAME section"
	grep -Eq "^ *$page +- " "$tmp/page.txt" || fail "$page.1's NAME line does not name it"
	groff -man -t -ww -Wbreak -z "$f" > "$tmp/groff.err" 2>&1
	[ -s "$tmp/groff.err" ] && { cat "$tmp/groff.err"; fail "groff warns about $page.1"; }
	n=$((n + 1))
done
[ $n -ge 10 ] || fail "only $n pages"
# the option tables of the Markdown come out as options, not as '|' text
MANWIDTH=100 man -l "$root/share/man/man1/perfkit-record.1" | grep -q '^ *-e, --event SPEC' ||
	fail "perfkit-record(1) does not list -e, --event SPEC"
MANPATH=$root/share/man man -w perfkit-report > /dev/null 2>&1 || fail "man -w perfkit-report through MANPATH"
# `perfkit help CMD` shows the page on a terminal (tmux gives it one), the usage when piped
if command -v tmux >/dev/null; then
	sock=$tmp/tmux.sock
	tmux -S "$sock" new-session -d -x 100 -y 40 \
		"env MANPATH=$root/share/man MANPAGER=cat PAGER=cat $root/bin/perfkit help record; sleep 30"
	for _ in $(seq 50); do
		tmux -S "$sock" capture-pane -p > "$tmp/pane.txt" 2>/dev/null
		grep -q 'PERFKIT-RECORD(1)' "$tmp/pane.txt" && break
		sleep 0.1
	done
	tmux -S "$sock" kill-server 2>/dev/null
	grep -q 'PERFKIT-RECORD(1)' "$tmp/pane.txt" || { cat "$tmp/pane.txt"; fail "perfkit help record on a terminal shows no man page"; }
fi
MANPATH=$root/share/man "$root/bin/perfkit" help record | head -1 | grep -q '^usage: perfkit record' ||
	fail "perfkit help record into a pipe does not print the usage"

comp=$root/share/bash-completion/completions/perfkit
[ -f "$comp" ] || fail "no bash completion installed"
(
	. "$comp"
	COMP_WORDS=("$root/bin/perfkit" rec); COMP_CWORD=1; _perfkit
	[ "${COMPREPLY[*]}" = record ] || { echo "rec -> ${COMPREPLY[*]}"; exit 1; }
	COMP_WORDS=("$root/bin/perfkit" record --call); COMP_CWORD=2; _perfkit
	[ "${COMPREPLY[*]}" = --call-graph= ] || { echo "record --call -> ${COMPREPLY[*]}"; exit 1; }
) || fail "bash completion"
[ -f "$root/share/zsh/vendor-completions/_perfkit" ] || fail "no zsh completion installed"
if command -v zsh >/dev/null; then
	zsh -n "$root/share/zsh/vendor-completions/_perfkit" || fail "the zsh completion does not parse"
fi
echo "ok: $n man pages, bash and zsh completions"
