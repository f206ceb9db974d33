# Redis for compose and the Kubernetes check where no registry is reachable: Debian's
# redis-server (7.0) from the debootstrap base that deploy/build.sh makes, run as the redis user
# with its data in /data (what compose and the StatefulSet mount). Like the redis:7 image,
# arguments that begin with '-' are redis-server's options (the manifests give only args), and a
# command is run as given (compose's `redis-server ...`). Where a registry is reachable, redis:7
# does the same job (ARENA_REDIS_IMAGE=redis:7).
ARG BASE=arena-base:bookworm
FROM ${BASE}
RUN mkdir -p /data && chown redis:redis /data \
    && printf '#!/bin/sh\ncase "$1" in -*) set -- redis-server "$@" ;; esac\nexec "$@"\n' \
        > /usr/local/bin/redis-entrypoint \
    && chmod 0755 /usr/local/bin/redis-entrypoint
USER redis
WORKDIR /data
EXPOSE 6379
ENTRYPOINT ["/usr/local/bin/redis-entrypoint"]
CMD ["redis-server"]
