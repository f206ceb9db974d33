#!/usr/bin/env bash
# Build Arena's images with no image registry, and the image builds themselves with no network:
#   1. arena-base:bookworm  a Debian base made with debootstrap (Python 3.11, redis-server) and
#                           `docker import` (made once; --rebuild-base makes it again)
#   2. wheels               Arena's wheel and every dependency's, built on this host with pip
#                           (dependencies kept in a cache, so a second build needs no index)
#   3. arena:latest         deploy/Dockerfile on that base, `docker build --network none`
#   4. arena-redis:7        deploy/redis.Dockerfile: Redis for compose, same base, no network
#
# Usage: deploy/build.sh [--rebuild-base] [--ref GIT_REF]
#   --ref REF   build Arena from a commit (git archive) instead of the working tree
# Environment: ARENA_IMAGE (arena:latest), ARENA_BASE_IMAGE (arena-base:bookworm),
#   ARENA_REDIS_IMAGE (arena-redis:7), ARENA_BUILD_CACHE (~/.cache/arena-deploy),
#   DEBIAN_MIRROR (http://deb.debian.org/debian), PYTHON (python3: must be 3.11, like the base).
# Needs: docker (a running engine), debootstrap (Debian's package) as root for step 1, pip.
# Each step prints its wall time; the last line names the images.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
IMAGE=${ARENA_IMAGE:-arena:latest}
BASE=${ARENA_BASE_IMAGE:-arena-base:bookworm}
REDIS_IMAGE=${ARENA_REDIS_IMAGE:-arena-redis:7}
CACHE=${ARENA_BUILD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/arena-deploy}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
PYTHON=${PYTHON:-python3}
SUITE=bookworm  # Debian 12: Python 3.11, the project's
rebuild_base=0
ref=""

die() { echo "deploy/build.sh: $*" >&2; exit 1; }
say() { echo "deploy/build.sh: $*" >&2; }

while (($#)); do
    case $1 in
        --rebuild-base) rebuild_base=1 ;;
        --ref) ref=${2:?--ref needs a git ref}; shift ;;
        -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument $1 (see --help)" ;;
    esac
    shift
done

command -v docker >/dev/null || die "no docker client on PATH"
docker info >/dev/null 2>&1 || die "no Docker engine answers (start dockerd, or set DOCKER_HOST)"
"$PYTHON" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' \
    || die "$PYTHON is not Python 3.11: the wheels must match the base's Python (PYTHON=...)"

work=$(mktemp -d "${TMPDIR:-/tmp}/arena-build.XXXXXX")
trap 'rm -rf "$work"' EXIT
export DOCKER_BUILDKIT=0  # the classic builder: no buildx plugin needed, --network none honoured
t_all=$SECONDS

# 1. The base: debootstrap (minbase + Python, venv, Redis) into a folder, imported as an image.
t=$SECONDS
if ((rebuild_base)) || ! docker image inspect "$BASE" >/dev/null 2>&1; then
    command -v debootstrap >/dev/null || die "no debootstrap (apt-get install debootstrap)"
    (($(id -u) == 0)) || die "debootstrap needs root to make the base image"
    say "base: debootstrap $SUITE from $MIRROR"
    debootstrap --variant=minbase \
        --include=python3,python3-venv,ca-certificates,redis-server,redis-tools \
        "$SUITE" "$work/rootfs" "$MIRROR" >"$work/debootstrap.log" 2>&1 \
        || { tail -20 "$work/debootstrap.log" >&2; die "debootstrap failed"; }
    rm -rf "$work"/rootfs/var/lib/apt/lists/* "$work"/rootfs/var/cache/apt/*.bin \
        "$work"/rootfs/var/cache/apt/archives/*.deb
    tar -C "$work/rootfs" -c . | docker import \
        --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        --change 'ENV LANG=C.UTF-8' \
        --change 'CMD ["/bin/bash"]' \
        --message "debootstrap --variant=minbase $SUITE $MIRROR" - "$BASE" >/dev/null
    rm -rf "$work/rootfs"
    say "base: $BASE made in $((SECONDS - t)) s"
else
    say "base: $BASE is there (--rebuild-base makes it again)"
fi
base_py=$(docker run --rm --network none "$BASE" python3 -c \
    'import sys; print("%d.%d" % sys.version_info[:2])')
[[ $base_py == 3.11 ]] || die "$BASE has Python $base_py, not 3.11"

# 2. The wheels, on the host: Arena's from the working tree (or --ref), its dependencies' from
# the cache, else from the package index.
t=$SECONDS
ctx="$work/context"
mkdir -p "$ctx/wheels" "$work/src" "$CACHE/wheels"
if [[ -n $ref ]]; then
    source_id=$(git -C "$ROOT" rev-parse --verify "$ref^{commit}") || die "no commit $ref"
    git -C "$ROOT" archive "$source_id" | tar -x -C "$work/src"
else
    source_id=worktree  # tracked and new files, not what .gitignore leaves out (var/, caches)
    git -C "$ROOT" ls-files -z --cached --others --exclude-standard \
        | (cd "$ROOT" && xargs -0 tar -c --ignore-failed-read 2>/dev/null) | tar -x -C "$work/src"
fi
# first from the cache alone (no index: offline), else with the index
wheel() {
    "$PYTHON" -m pip wheel --quiet --no-index --find-links "$CACHE/wheels" "$@" \
        >"$work/pip.log" 2>&1 && return
    "$PYTHON" -m pip wheel --quiet --find-links "$CACHE/wheels" "$@" >"$work/pip.log" 2>&1 \
        || { cat "$work/pip.log" >&2; die "pip wheel $* failed"; }
    # what building Arena's wheel needs (pyproject's build-system), for the next build offline
    "$PYTHON" -m pip wheel --quiet --wheel-dir "$CACHE/wheels" "setuptools>=68" wheel \
        >>"$work/pip.log" 2>&1 || true
}
wheel --no-deps --wheel-dir "$ctx/wheels" "$work/src"
wheel --wheel-dir "$ctx/wheels" "$ctx"/wheels/arena-*.whl
# The host's pip chose by the host's Python; markers can name a full version (redis wants
# async-timeout below Python 3.11.3: the base has 3.11.2). So the base's own pip, with no
# network, tries the set; what it lacks is built on the host and added, until nothing is.
for _ in 1 2 3 4 5 6 7 8; do
    if lack=$(docker run --rm --network none -v "$ctx/wheels:/wheels:ro" "$BASE" sh -c \
        'python3 -m venv /tmp/v && /tmp/v/bin/pip install -q --dry-run --no-index \
         --find-links /wheels arena' 2>&1); then
        lack=""
        break
    fi
    req=$(sed -n 's/.*No matching distribution found for \([^;]*\).*/\1/p' <<<"$lack" | head -1)
    [[ -n $req ]] || { echo "$lack" >&2; die "the base's pip refuses the wheels"; }
    say "wheels: the base's Python also needs $req"
    wheel --wheel-dir "$ctx/wheels" "${req% }"
done
[[ -z $lack ]] || { echo "$lack" >&2; die "the base's pip still lacks wheels"; }
find "$ctx/wheels" -name '*.whl' ! -name 'arena-*' -exec cp -n {} "$CACHE/wheels/" \;
say "wheels: $(ls "$ctx/wheels" | wc -l) in $((SECONDS - t)) s"

# 3. and 4. The images, with no network: everything they need is in the context and the base.
t=$SECONDS
cp "$work/src/deploy/Dockerfile" "$ctx/"  # the ref's own (--ref), as its code
build() {  # quiet, less the classic builder's deprecation notice (errors still show)
    docker build --quiet --network none --build-arg "BASE=$BASE" "$@" >/dev/null \
        2> >(grep -v -E 'DEPRECATED|BuildKit is currently disabled|environment-variable\.$|^$' >&2)
}
# the label names what was built: a commit (--ref), or "worktree" (tests/deploy reuse an image
# only if it is the commit they test)
build -f "$ctx/Dockerfile" -t "$IMAGE" --label "org.arena.source=$source_id" "$ctx" \
    || die "docker build of $IMAGE failed"
say "image: $IMAGE in $((SECONDS - t)) s"
t=$SECONDS
mkdir "$work/redis" && cp "$ROOT/deploy/redis.Dockerfile" "$work/redis/Dockerfile"
build -t "$REDIS_IMAGE" "$work/redis" || die "docker build of $REDIS_IMAGE failed"
say "image: $REDIS_IMAGE in $((SECONDS - t)) s"
echo "built $IMAGE and $REDIS_IMAGE on $BASE in $((SECONDS - t_all)) s"
