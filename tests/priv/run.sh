#!/usr/bin/env bash
# Privilege tests: perfkit run by an unprivileged user at perf_event_paranoid 2, 3 and -1.
#
#   run.sh PERFKIT_BINARY
#
# Needs root (to create the user perfkit-ci and set the sysctl); skips with 77 otherwise.
# The original perf_event_paranoid is restored on exit, whatever happens.
set -u
PK=${1:?usage: run.sh PERFKIT_BINARY}
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (creates a user, sets perf_event_paranoid)"; exit 77; }
PARANOID=/proc/sys/kernel/perf_event_paranoid
[ -w $PARANOID ] || { echo "SKIP: $PARANOID is not writable"; exit 77; }
command -v runuser > /dev/null || { echo "SKIP: runuser is not installed"; exit 77; }
USER_NAME=perfkit-ci
if ! id $USER_NAME > /dev/null 2>&1; then
	useradd -M -r -s /usr/sbin/nologin $USER_NAME || { echo "SKIP: cannot create $USER_NAME"; exit 77; }
fi
orig=$(cat $PARANOID)
work=$(mktemp -d /tmp/pk-priv.XXXXXX)
trap 'echo "$orig" > $PARANOID; rm -rf "$work"' EXIT
# the build tree may not be readable by the user: run a private copy (static library build)
cp "$PK" "$work/perfkit"
chmod 755 "$work" "$work/perfkit"
mkdir "$work/u" && chown $USER_NAME "$work/u"
P="$work/perfkit"
cd "$work" || exit 1 # scratch files (chk, out, err) live here
as_user() { (cd "$work/u" && runuser -u $USER_NAME -- "$@"); }

fails=0
t() { # t NAME CONDITION-STATUS: print one result line
	if [ "$2" = 0 ]; then echo "ok   $1"; else echo "FAIL $1"; fails=$((fails + 1)); fi
}
has() { grep -q -- "$2" "$1"; } # has FILE PATTERN

for lvl in 2 3 -1; do
	echo "$lvl" > $PARANOID
	echo "== perf_event_paranoid $lvl"
	# check tells the truth: the level, no capability, system-wide only when allowed
	as_user "$P" check > chk 2>&1; cp chk "$work/chk.$lvl"
	has chk "perf_event_paranoid *$lvl:"; t "check names level $lvl" $?
	has chk "CAP_PERFMON=no"; t "check: no CAP_PERFMON" $?
	if [ "$lvl" -le 0 ]; then
		has chk "system-wide mode *yes"; t "check: system-wide yes" $?
	else
		has chk "system-wide mode *no" && grep -A2 "system-wide mode" chk | grep -q "CAP_PERFMON\|paranoid"
		t "check: system-wide no, with the reason" $?
	fi
	# counting the user's own process
	as_user "$P" stat -x, -e task-clock -- true > out 2> err; rc=$?
	if [ "$lvl" = 3 ] && [ $rc != 0 ]; then
		# a kernel with the Debian/Ubuntu patch: refused, with the level and the fix
		has err "paranoid is 3" && has err CAP_PERFMON; t "stat own process refused at 3, explained" $?
	else
		[ $rc = 0 ] && has err "task-clock"; t "stat -e task-clock own process works" $?
	fi
	# system-wide
	as_user "$P" stat -a -e task-clock -- sleep 0.1 > out 2> err; rc=$?
	if [ "$lvl" -le 0 ]; then
		[ $rc = 0 ]; t "stat -a works at $lvl" $?
	else
		[ $rc != 0 ] && has err CAP_PERFMON && has err "level is $lvl\|paranoid is $lvl"
		t "stat -a refused naming CAP_PERFMON and level $lvl" $?
	fi
	# another user's process (pid 1, root's)
	as_user "$P" stat -e task-clock -p 1 -- sleep 0.1 > out 2> err; rc=$?
	if [ "$lvl" -le 0 ] && [ $rc = 0 ]; then
		t "stat -p 1 (allowed at $lvl)" 0
	else
		[ $rc != 0 ] && [ $rc -lt 128 ] && has err "another user" && has err "permission denied\|EACCES\|EPERM\|Permission denied"
		t "stat -p 1: explained refusal, no crash" $?
	fi
	[ $fails = 0 ] || cat err
done

echo "== perf_event_paranoid 2: record, ring size, file limits"
echo 2 > $PARANOID
as_user "$P" record -q -e cpu-clock -o "$work/u/x.data" -- true > out 2> err; rc=$?
[ $rc = 0 ] && as_user "$P" script -i "$work/u/x.data" > out 2> err2 && [ ! -s err2 ]
t "record -e cpu-clock of own process, file reads" $?
# -m beyond perf_event_mlock_kb (4096 pages = 16 MiB a ring): shrunk with a notice naming
# the limit, and the recording works
as_user "$P" record -q -m 4096 -e cpu-clock -o "$work/u/m.data" -- true > out 2> err; rc=$?
[ $rc = 0 ] && has err "notice: 4096-page ring buffers exceed.*perf_event_mlock_kb" &&
	as_user "$P" script -i "$work/u/m.data" > /dev/null
t "record -m 4096: shrunk with a notice" $?
# RLIMIT_NOFILE: a low soft limit is raised to the hard limit (12 events x 2 CPUs x -a is
# refused at 2 anyway, so count per thread: 40 events on the user's own process)
evs=$(printf 'task-clock,%.0s' $(seq 40)); evs=${evs%,}
as_user bash -c "ulimit -S -n 32; exec '$P' stat -x, -e $evs -- true" > out 2> err; rc=$?
[ $rc = 0 ] && has err "RLIMIT_NOFILE"; t "soft RLIMIT_NOFILE raised to the hard limit" $?
as_user bash -c "ulimit -n 32; exec '$P' stat -x, -e $evs -- true" > out 2> err; rc=$?
[ $rc != 0 ] && [ $rc -lt 128 ] && has err "open files\|EMFILE\|RLIMIT_NOFILE"
t "hard RLIMIT_NOFILE too low: clear EMFILE message" $?
[ $fails = 0 ] || cat err

echo "== the output lock across users (a lock file the user cannot write)"
mkdir -m 777 "$work/shared"
"$P" record -q -e cpu-clock -o "$work/shared/s.data" -- sleep 1 > /dev/null 2>&1 & owner=$!
for _ in $(seq 100); do [ -s "$work/shared/s.data.lock" ] && break; sleep 0.02; done
as_user "$P" record -q -e cpu-clock:u -o "$work/shared/s.data" -- true > out 2> err; rc=$?
wait $owner
[ $rc = 1 ] && has err "'$work/shared/s.data' is being written by another perfkit record (pid $owner)"
t "a root recorder's lock refuses the user's recorder, naming the pid" $?
"$P" record -q -e cpu-clock -o "$work/shared/s.data" -- sleep 3 > /dev/null 2>&1 & dead=$!
for _ in $(seq 100); do [ -s "$work/shared/s.data.lock" ] && break; sleep 0.02; done
kill -KILL $dead; wait $dead 2> /dev/null
as_user "$P" record -e cpu-clock:u -N -o "$work/shared/s.data" -- true > out 2> err; rc=$?
[ $rc = 0 ] && has err "was being written by pid $dead.*taking over its lock" &&
	[ ! -e "$work/shared/s.data.lock" ]
t "a dead root recorder's lock file is taken over by the user" $?
[ $fails = 0 ] || cat err

echo "$fails failure(s)"
[ $fails = 0 ]
