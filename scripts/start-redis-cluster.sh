#!/usr/bin/env bash
# Start a Redis Cluster of three masters on 127.0.0.1:7000-7002 (nothing on disk), for the
# tests that prove the Redis backend runs on a cluster.
# Usage: scripts/start-redis-cluster.sh   (needs redis-server and redis-cli; idempotent)
set -euo pipefail
first="${REDIS_CLUSTER_PORT:-7000}"
dir="${REDIS_CLUSTER_DIR:-/tmp/ckpt-redis-cluster}"
ports=("$first" "$((first + 1))" "$((first + 2))")

if [ "$(redis-cli -p "$first" cluster info 2>/dev/null | tr -d '\r' | grep -c '^cluster_state:ok$')" = 1 ]; then
  echo "redis cluster: already up on 127.0.0.1:${ports[0]}-${ports[2]}"
  exit 0
fi

for port in "${ports[@]}"; do
  redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
  rm -rf "${dir:?}/$port" && mkdir -p "$dir/$port"
  redis-server --port "$port" --bind 127.0.0.1 --daemonize yes --dir "$dir/$port" \
    --cluster-enabled yes --cluster-config-file nodes.conf --cluster-node-timeout 5000 \
    --save "" --appendonly no --logfile "$dir/$port/redis.log"
done
for port in "${ports[@]}"; do
  for _ in $(seq 1 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
done
redis-cli --cluster create "${ports[@]/#/127.0.0.1:}" --cluster-replicas 0 --cluster-yes >/dev/null
for _ in $(seq 1 100); do
  if [ "$(redis-cli -p "$first" cluster info | tr -d '\r' | grep -c '^cluster_state:ok$')" = 1 ]; then
    echo "redis cluster: up on 127.0.0.1:${ports[0]}-${ports[2]}"
    exit 0
  fi
  sleep 0.2
done
echo "redis cluster: did not reach cluster_state:ok" >&2
exit 1
