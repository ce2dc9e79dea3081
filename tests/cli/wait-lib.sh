# Sourced by CLI cases that drive a program at moments of their own (signals, keys, a
# screen read through tmux). On a loaded machine, or under ASan or valgrind, a program
# takes far longer than usual to start, to set up or to draw: fixed sleeps then race it.
# These waits end on what the case needs to have happened, and are bounded (generously:
# the bound only costs time when the case fails anyway).
#
#   wait_until SECS CMD...      run CMD every 50 ms until it succeeds; status 1 after SECS
#   catches PID SIG             PID has a handler for signal number SIG (/proc/PID/status
#                               SigCgt), so that SIG no longer kills it
#   wait_catching PID [SECS]    until PID catches SIGINT (2), SIGTERM (15) and SIGHUP (1):
#                               a stop signal sent before that is the default action's
#   polling PID                 PID's (main) thread waits in poll/ppoll/select: a perfkit
#                               stat or record has opened and enabled its events and is in
#                               its loop (by /proc/PID/wchan, or the syscall's number)
#   wait_polling PID [SECS]     until PID is polling (default 60 s)
#   screen_settle [-k N] FILE CMD...
#                               CMD (a tmux capture-pane) into FILE until two captures
#                               0.3 s apart are the same (but for their first N lines: a
#                               live header), up to 30 s: a screen caught while
#                               a program draws it (the terminal gets it in pieces) holds a
#                               part of it. Call it once the screen shows what was waited
#                               for (a key's effect), not right after the key: a program
#                               that has not read the key yet shows a steady old screen.

wait_until() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.05
	done
	return 0
}

catches() {
	local m
	m=$(awk '$1 == "SigCgt:" { print $2 }' "/proc/$1/status" 2>/dev/null)
	[ -n "$m" ] && (( (0x$m >> ($2 - 1)) & 1 ))
}

catches_stop() { catches "$1" 2 && catches "$1" 15 && catches "$1" 1; }

wait_catching() {
	wait_until "${2:-60}" catches_stop "$1" ||
		{ echo "pid $1 caught no stop signals in ${2:-60} s" >&2; return 1; }
}

polling() {
	local w n
	w=$(cat "/proc/$1/wchan" 2>/dev/null)
	case $w in *poll_schedule*|*do_sys_poll*|*do_select*) return 0 ;; esac
	read -r n _ < "/proc/$1/syscall" 2>/dev/null || return 1
	case $(uname -m):$n in x86_64:7|x86_64:271|x86_64:23|aarch64:73|aarch64:72) return 0 ;; esac
	return 1
}

wait_polling() {
	wait_until "${2:-60}" polling "$1" ||
		{ echo "pid $1 did not get to its loop in ${2:-60} s" >&2; return 1; }
}

screen_settle() {
	local f i k=0
	[ "$1" = -k ] && { k=$2; shift 2; }
	f=$1
	shift
	"$@" > "$f" || return 1
	for i in $(seq 100); do
		sleep 0.3
		"$@" > "$f.again" || return 1
		if cmp -s <(tail -n +$((k + 1)) "$f") <(tail -n +$((k + 1)) "$f.again"); then
			rm -f "$f.again"
			return 0
		fi
		mv "$f.again" "$f"
	done
	echo "the screen did not settle in 30 s" >&2
	return 1
}
