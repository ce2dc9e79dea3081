# bash completion for perfkit (installed as share/bash-completion/completions/perfkit).
# The lists come from perfkit itself: `perfkit --list-cmds`, `perfkit CMD --list-opts`
# and `perfkit list --raw-dump` (event names, read once per shell).

_perfkit_events=
_perfkit()
{
	local cur prev cmd i words
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=
	[ "$COMP_CWORD" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD - 1]}
	local pk=${COMP_WORDS[0]}
	COMPREPLY=()
	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W "$("$pk" --list-cmds 2>/dev/null) --help --version" -- "$cur"))
		return 0
	fi
	cmd=${COMP_WORDS[1]}
	if [ "$cmd" = help ]; then
		[ "$COMP_CWORD" -eq 2 ] &&
			COMPREPLY=($(compgen -W "$("$pk" --list-cmds 2>/dev/null)" -- "$cur"))
		return 0
	fi
	# after "--" comes a command to run: complete it as a command line
	for ((i = 2; i < COMP_CWORD; i++)); do
		if [ "${COMP_WORDS[i]}" = -- ]; then
			COMPREPLY=($(compgen -c -- "$cur" | sort -u))
			return 0
		fi
	done
	case $prev in
	-e|--event)
		[ -n "$_perfkit_events" ] || _perfkit_events=$("$pk" list --raw-dump 2>/dev/null)
		# an event list: complete the part after the last comma
		local pre=
		case $cur in *,*) pre=${cur%,*},; cur=${cur##*,} ;; esac
		COMPREPLY=($(compgen -P "$pre" -W "$_perfkit_events" -- "$cur"))
		return 0 ;;
	-i|--input|-o|--output)
		COMPREPLY=($(compgen -f -- "$cur"))
		return 0 ;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$("$pk" "$cmd" --list-opts 2>/dev/null)" -- "$cur"))
		# "--opt=" takes its value right after the '='
		if [ "${#COMPREPLY[@]}" = 1 ] && [[ ${COMPREPLY[0]} == *= ]]; then
			compopt -o nospace 2>/dev/null
		fi
		return 0
	fi
	COMPREPLY=($(compgen -f -- "$cur"))
	return 0
}
complete -F _perfkit perfkit
