#!/usr/bin/env bash
# Installs and starts what Slipway and its tests need on a Debian machine:
# PostgreSQL binaries, Docker (started, in Swarm mode), Chromium for the
# browser tests, musl for the static health-check probe, wrk and nginx for
# benchmarks, and git (the test suite serves repositories with git http-backend).
# Safe to run again: it only installs what is missing and starts what is down.
set -euo pipefail

need=()
have() { dpkg -s "$1" >/dev/null 2>&1; }
for pkg in postgresql docker.io chromium musl-tools git wrk nginx-light ca-certificates; do
  have "$pkg" || need+=("$pkg")
done
# nginx-light conflicts with nothing we need; accept any nginx flavour.
if [ "${#need[@]}" -gt 0 ] && have nginx && [[ " ${need[*]} " == *" nginx-light "* ]]; then
  need=("${need[@]/nginx-light/}")
fi
need=($(printf '%s\n' "${need[@]}" | grep -v '^$' || true))
if [ "${#need[@]}" -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "missing packages: ${need[*]} (run as root, or install them with apt-get)" >&2
    exit 1
  fi
  echo "installing: ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  # The nginx package starts a server on port 80 that the gateway wants.
  systemctl stop nginx 2>/dev/null || service nginx stop 2>/dev/null || pkill -x nginx 2>/dev/null || true
fi

if ! docker info >/dev/null 2>&1; then
  if [ "$(id -u)" != 0 ]; then
    echo "Docker is not running and this is not root: start dockerd first" >&2
    exit 1
  fi
  echo "starting dockerd"
  mkdir -p /var/log
  nohup dockerd >/var/log/slipway-dockerd.log 2>&1 &
  for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
  docker info >/dev/null 2>&1 || { echo "dockerd did not start; see /var/log/slipway-dockerd.log" >&2; exit 1; }
fi

if [ "$(docker info --format '{{.Swarm.LocalNodeState}}')" != "active" ]; then
  echo "initialising Docker Swarm"
  docker swarm init --advertise-addr 127.0.0.1 >/dev/null
fi
