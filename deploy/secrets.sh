#!/usr/bin/env bash
# Make a deployment's secrets once, and keep them (a new archive key would leave every archive
# signed with the old one unverifiable):
#   DIR/archive.key  the platform's Ed25519 archive-signing key (PEM, PKCS#8), readable only by
#                    the image's user (uid 10001): the engines sign archives with it
#   DIR/env          ARENA_SECRET (seat tokens, signed service calls), ARENA_REDIS_PASSWORD,
#                    ARENA_ARCHIVE_KEY_FILE (that key file), ARENA_ARCHIVE_PUBKEY (its public
#                    half, 64 hex digits: what `arena verify --key` takes)
# Usage: deploy/secrets.sh [DIR]   (default ~/.config/arena-deploy); then, for compose:
#   set -a; . DIR/env; set +a
# What exists is kept; only what is missing is made. Needs openssl.
set -euo pipefail

dir=${1:-${XDG_CONFIG_HOME:-$HOME/.config}/arena-deploy}
uid=10001  # deploy/Dockerfile's USER
command -v openssl >/dev/null || { echo "deploy/secrets.sh: needs openssl" >&2; exit 1; }
mkdir -p "$dir"
chmod 0700 "$dir"
key="$dir/archive.key"
if [[ ! -s $key ]]; then
    (umask 077 && openssl genpkey -algorithm ed25519 -out "$key")
    chmod 0400 "$key"
    # the containers run as uid 10001 and read the file through a bind mount (compose secret)
    # (not root: readable by all, but inside a folder only its owner can enter)
    if (($(id -u) == 0)); then chown "$uid" "$key"; else chmod 0444 "$key"; fi
fi
pub=$(openssl pkey -in "$key" -pubout -outform DER | tail -c 32 | od -An -v -tx1 | tr -d ' \n')
[[ ${#pub} == 64 ]] || { echo "deploy/secrets.sh: cannot read $key" >&2; exit 1; }
env="$dir/env"
if [[ ! -s $env ]]; then
    (
        umask 077
        printf 'ARENA_SECRET=%s\nARENA_REDIS_PASSWORD=%s\n' "$(openssl rand -hex 32)" \
            "$(openssl rand -hex 32)" >"$env"
    )
fi
# the key's lines follow the key file (made again if the file was replaced)
sed -i '/^ARENA_ARCHIVE_KEY_FILE=/d; /^ARENA_ARCHIVE_PUBKEY=/d' "$env"
printf 'ARENA_ARCHIVE_KEY_FILE=%s\nARENA_ARCHIVE_PUBKEY=%s\n' "$(cd "$dir" && pwd)/archive.key" \
    "$pub" >>"$env"
echo "$env"
