# shellcheck shell=bash
# Process management shared by ./dev and infra/local/*.sh.
#
# Every daemon we start runs in its own session (setsid) and is remembered in a pid file that holds
# "<pid> <signature>"; the signature is a piece of its command line, so a stop never kills a process
# that merely reused the pid. Nothing here touches a process it did not start.

dg_log() { printf '%s\n' "$*" >&2; }
dg_die() {
  printf 'error: %s\n' "$*" >&2
  exit 1
}

# dg_running PID: the process exists and is not a zombie.
dg_running() {
  local pid=$1
  [[ -n $pid && -r /proc/$pid/status ]] || return 1
  ! grep -q '^State:[[:space:]]*Z' "/proc/$pid/status" 2>/dev/null
}

# dg_cmdline_has PID SIGNATURE: the command line of PID holds SIGNATURE (quiet when PID is gone meanwhile).
dg_cmdline_has() {
  { tr '\0' ' ' <"/proc/$1/cmdline"; } 2>/dev/null | grep -qF -- "$2"
}

# dg_alive PIDFILE: the process recorded in PIDFILE runs and is still the one we started.
dg_alive() {
  local pidfile=$1 pid sig
  [[ -f $pidfile ]] || return 1
  read -r pid sig <"$pidfile" || [[ -n ${pid:-} ]] || return 1
  dg_running "$pid" || return 1
  [[ -z $sig ]] && return 0
  dg_cmdline_has "$pid" "$sig"
}

dg_pid_of() {
  local pid _rest
  read -r pid _rest <"$1"
  printf '%s\n' "$pid"
}

# dg_spawn PIDFILE LOGFILE SIGNATURE CMD...: start CMD detached in its own session, output appended to LOGFILE.
# Returns once the child has exec'd CMD (its command line carries SIGNATURE) or has died: until the exec, the child is
# a copy of this shell, whose command line lacks the signature, and dg_alive would call a starting server dead (a
# loaded machine can take longer to exec than a first health check takes to fail).
dg_spawn() {
  local pidfile=$1 logfile=$2 sig=$3 pid i
  shift 3
  mkdir -p "$(dirname "$pidfile")" "$(dirname "$logfile")"
  (exec setsid "$@" >>"$logfile" 2>&1 </dev/null) &
  pid=$!
  printf '%s %s\n' "$pid" "$sig" >"$pidfile"
  for ((i = 0; i < 300; i++)); do
    dg_running "$pid" || return 0
    dg_cmdline_has "$pid" "$sig" && return 0
    sleep 0.1
  done
  dg_log "  warning: pid $pid has not exec'd its command ($sig) within 30 s"
}

# dg_stop PIDFILE [TIMEOUT_SECONDS]: SIGTERM, wait, then SIGKILL the process group. Removes the pid file.
dg_stop() {
  local pidfile=$1 timeout=${2:-30} pid i
  if ! dg_alive "$pidfile"; then
    rm -f "$pidfile"
    return 0
  fi
  pid=$(dg_pid_of "$pidfile")
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < timeout * 10; i++)); do
    dg_running "$pid" || break
    sleep 0.1
  done
  if dg_running "$pid"; then
    dg_log "  $(basename "$pidfile" .pid) did not stop within ${timeout}s; killing it"
    kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$pidfile"
}

# dg_kill PIDFILE: SIGKILL at once (a crash, for tests that kill a server), wait until it is gone, remove the pid file.
dg_kill() {
  local pidfile=$1 pid i
  if dg_alive "$pidfile"; then
    pid=$(dg_pid_of "$pidfile")
    kill -KILL "$pid" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do
      dg_running "$pid" || break
      sleep 0.1
    done
  fi
  rm -f "$pidfile"
}

# dg_port_busy PORT: something listens on 127.0.0.1:PORT.
dg_port_busy() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# dg_wait_http URL SECONDS PIDFILE: poll URL until it answers 2xx; fail early if the process died.
dg_wait_http() {
  local url=$1 seconds=$2 pidfile=${3:-} i
  for ((i = 0; i < seconds * 10; i++)); do
    if curl -fsS -o /dev/null --max-time 2 "$url" 2>/dev/null; then return 0; fi
    if [[ -n $pidfile ]] && ! dg_alive "$pidfile"; then return 1; fi
    sleep 0.1
  done
  return 1
}

# Unprivileged execution. When we are root, databases run as nobody:nogroup with their data directory
# chowned to that user. DG_UNPRIV_PREFIX is the command prefix to use (empty when not root).
DG_UNPRIV_UID=${DG_UNPRIV_UID:-65534}
DG_UNPRIV_GID=${DG_UNPRIV_GID:-65534}

# dg_unpriv_prepare DIR: make DIR usable by the unprivileged user and set DG_UNPRIV_PREFIX.
dg_unpriv_prepare() {
  local dir=$1
  DG_UNPRIV_PREFIX=()
  [[ $EUID -eq 0 ]] || return 0
  chown -R "$DG_UNPRIV_UID:$DG_UNPRIV_GID" "$dir"
  local prefix=(setpriv --reuid="$DG_UNPRIV_UID" --regid="$DG_UNPRIV_GID" --clear-groups --)
  if "${prefix[@]}" test -w "$dir" -a -x "$dir"; then
    DG_UNPRIV_PREFIX=("${prefix[@]}")
  else
    dg_log "  warning: $dir is not reachable by uid $DG_UNPRIV_UID (a parent directory is private);"
    dg_log "           running as root instead. Clone into a world-traversable path to avoid this."
  fi
}
