#!/usr/bin/env bash
# Validating the compose file needs no Docker engine, only a compose client (v2 plugin or legacy v1).
set -euo pipefail
if docker compose version >/dev/null 2>&1; then
  docker compose config --quiet && echo "docker compose config: valid"
elif command -v docker-compose >/dev/null 2>&1; then
  docker-compose config --quiet && echo "docker-compose config: valid"
else
  echo "no compose client on this machine; docker-compose.yml not validated"
fi
