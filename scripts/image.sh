#!/usr/bin/env bash
# Builds the app's image, bpe-workbench (Dockerfile): bash scripts/image.sh [--local-base] [docker build options]
#
# The Dockerfile starts from BASE, Docker Hub's python:3.11-slim-bookworm unless BASE is set. --local-base
# builds that base instead, for a machine that reaches Debian's mirror but not Docker Hub: Debian bookworm
# with python3 and its venv module, made by debootstrap (installed from Debian if missing) and loaded with
# `docker import` as bpe-base:bookworm (once; delete that image to make it again), trusting the certificate
# authorities this machine trusts. MIRROR picks the mirror.
# The build runs on the host's network (--network host): it needs no NAT from the Docker daemon.
set -euo pipefail
cd "$(dirname "$0")/.."
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
base=${BASE:-python:3.11-slim-bookworm}
if [ "${1:-}" = "--local-base" ]; then
  shift
  base=bpe-base:bookworm
  if ! docker image inspect "$base" >/dev/null 2>&1; then
    if ! command -v debootstrap >/dev/null; then
      $sudo apt-get update -qq
      DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq debootstrap >/dev/null
    fi
    rootfs=$(mktemp -d)
    trap '$sudo rm -rf "$rootfs"' EXIT
    echo "building $base from ${MIRROR:-http://deb.debian.org/debian} (debootstrap, about a minute)"
    $sudo debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates bookworm "$rootfs" \
      "${MIRROR:-http://deb.debian.org/debian}" >"$rootfs.log" 2>&1 || { tail -20 "$rootfs.log"; exit 1; }
    rm -f "$rootfs.log"
    $sudo rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
    # it trusts what this machine trusts (a proxy that inspects TLS has its own authority), pip included
    $sudo cp /etc/ssl/certs/ca-certificates.crt "$rootfs/usr/local/share/ca-certificates/this-machine.crt"
    $sudo chroot "$rootfs" update-ca-certificates >/dev/null
    $sudo tar -C "$rootfs" -c . | docker import --change 'CMD ["bash"]' --change 'ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt' - "$base" >/dev/null
  fi
fi
docker build --network host --build-arg BASE="$base" --label org.bpe-workbench=1 -t bpe-workbench "$@" .
# the image this build replaced, left without a name: removed (only ours, by the label)
docker image prune -f --filter label=org.bpe-workbench=1 >/dev/null
