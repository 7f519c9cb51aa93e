#!/bin/bash
# Container health check without curl: GET http://127.0.0.1:$LOAM_HTTP_PORT<path> over
# bash's /dev/tcp and succeed only on an HTTP 200 status line.
# Usage: loam-healthcheck [/healthz|/readyz]   (port: LOAM_HTTP_PORT, default 7778)
set -u
path="${1:-/healthz}"
port="${LOAM_HTTP_PORT:-7778}"
exec 3<>"/dev/tcp/127.0.0.1/${port}" || exit 1
printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' "$path" >&3
IFS= read -r -t 4 status <&3 || exit 1
[[ "$status" == HTTP/1.?" 200 "* ]]
