#!/usr/bin/env bash
# Set up everything curriculab and its test suite need, in ./.venv. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}

# System packages (as root, with apt): bubblewrap sandboxes model-generated code (the system
# python3 runs inside it); docker.io serves the Docker sandbox backend's tests (images come from a
# local tarball, no registry). Set CURRICULAB_SKIP_DOCKER=1 to leave Docker out.
wanted=()
command -v bwrap >/dev/null 2>&1 || wanted+=(bubblewrap)
# Chromium drives the dashboard's real-browser test (playwright uses it; never `playwright install`).
command -v chromium >/dev/null 2>&1 || wanted+=(chromium)
if [ "${CURRICULAB_SKIP_DOCKER:-0}" != 1 ] && ! command -v dockerd >/dev/null 2>&1; then wanted+=(docker.io); fi
if [ ${#wanted[@]} -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq || true
    for package in "${wanted[@]}"; do
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$package" >/dev/null \
            || echo "warning: could not install $package" >&2
    done
fi
command -v bwrap >/dev/null 2>&1 || echo "warning: bubblewrap missing; code would run only under rlimits (status 'unsandboxed')" >&2

if [ ! -x .venv/bin/python ]; then
    "$python" -m venv .venv
fi
# The analysis half, the Inspect AI reader, the Docker SDK and the training half (torch CPU, TRL,
# datasets; optional extras, tested here) and the test tools.
.venv/bin/pip install --quiet --disable-pip-version-check -e ".[inspect,test,docker,train]"
# pip compiles the dependencies' bytecode but not an editable project's; where PYTHONDONTWRITEBYTECODE
# is set (as on CI), every command would compile curriculab's modules again (~0.2 s a start)
# (not the built-in task suite: its files are the tasks' own, copied into episodes as written)
.venv/bin/python -m compileall -q -j 0 -x "terminal/suite/" curriculab analysis taxonomy planner training dashboard >/dev/null
.venv/bin/curriculab --version

# The Docker backend's tests need a daemon: start one when it is installed, not running, and this
# runs as root (no bridge, no iptables: containers have no network anyway), on its Unix socket ONLY:
# a TCP socket without TLS client verification would let any process of any user on this machine
# drive Docker, which is root. The remote-daemon tests reach it over TCP through a mutual-TLS
# listener they start themselves (tests/docker_tls.py). Stop it with `kill $(cat /var/run/docker.pid)`.
# A daemon an earlier version of this script started with `-H tcp://127.0.0.1:2375 --tls=false` is
# stopped and started again without the port; any other daemon is left alone (with a warning when it
# listens on TCP without --tlsverify). Without a daemon the Docker tests fail saying how to get one.
if [ "${CURRICULAB_SKIP_DOCKER:-0}" != 1 ] && command -v dockerd >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    for proc in /proc/[0-9]*; do
        [ "$(cat "$proc/comm" 2>/dev/null)" = dockerd ] || continue
        args=$(tr '\0' ' ' < "$proc/cmdline" 2>/dev/null) || continue
        case "$args" in
        *"-H tcp://127.0.0.1:2375 --tls=false"*)
            echo "setup: stopping the dockerd an earlier setup started with an open TCP port (pid ${proc#/proc/}); starting it again on its Unix socket only" >&2
            kill "${proc#/proc/}" 2>/dev/null || true
            for _ in $(seq 1 60); do [ -d "$proc" ] || break; sleep 1; done
            if [ -d "$proc" ]; then echo "warning: dockerd (pid ${proc#/proc/}) did not stop within 60 s" >&2; fi ;;
        *tcp://*)
            case "$args" in *--tlsverify*) ;; *) echo "warning: dockerd (pid ${proc#/proc/}) listens on TCP without --tlsverify: anyone on this machine can drive it" >&2 ;; esac ;;
        esac
    done
    if ! docker info >/dev/null 2>&1; then
        (dockerd --bridge=none --iptables=false --ip-forward=false -H unix:///var/run/docker.sock \
            > /tmp/curriculab-dockerd.log 2>&1 &)
        for _ in $(seq 1 30); do docker info >/dev/null 2>&1 && break; sleep 1; done
        docker info >/dev/null 2>&1 || echo "warning: dockerd did not start (see /tmp/curriculab-dockerd.log)" >&2
    fi
fi
