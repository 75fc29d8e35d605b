#!/usr/bin/env bash
# Start PostgreSQL, MariaDB and Redis where they are installed but not running.
# A server that is not installed stays absent: the tests that need it skip, saying so.
set -u
up() { timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null; }
wait_port() { for _ in $(seq 1 30); do up "$1" && return 0; sleep 1; done; return 1; }

if ! up 5432 && command -v pg_ctlcluster >/dev/null 2>&1; then
  echo "ci: starting PostgreSQL"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start || true
  wait_port 5432 || echo "ci: PostgreSQL did not come up"
fi
if ! up 3306 && [ -x /usr/sbin/mariadbd ]; then
  echo "ci: starting MariaDB"
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd || true
  wait_port 3306 || echo "ci: MariaDB did not come up"
fi
if ! up 6379 && command -v redis-server >/dev/null 2>&1; then
  echo "ci: starting Redis"
  mkdir -p /var/lib/redis /var/log/redis 2>/dev/null || true
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log || true
  wait_port 6379 || echo "ci: Redis did not come up"
fi
exit 0
