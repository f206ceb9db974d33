"""The deployment run for real (slow, and only where a Docker engine answers): deploy/build.sh
builds the images of the last commit with no registry (a debootstrap Debian base, wheels built
on the host, the builds themselves with no network); deploy/docker-compose.yml starts Redis, two
engine containers, a bot worker, the matchmaker and the web server; a tournament is played
through them, a person plays a game through the published web port (the play API: a guest at a
table with a bot, every decision answered until the end) and an organiser has the web server
play a small tournament (its journal on the stack's tournaments volume), `arena verify` checks
every archive against the platform key, and the stack stops cleanly. Then every Kubernetes
container of deploy/k8s runs in the same image as the kubelet would start it, becomes ready,
and plays a few games whose archives verify, and a person plays a game through the web
server's pod.

    python3 -m pytest tests/deploy/test_docker_run.py -m slow -s -p no:cacheprovider

It prints how long each step took. Nothing here leaves the machine: the stacks' networks are
Docker bridges of this host, and the one published port is bound on it.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import shutil
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from services.eventlog.signing import Signer
from services.redisinfra.server import free_port
from tests.botapi.helpers import http
from tests.deploy.test_deploy import _manifests
from tests.play.openapi_client import Client
from tests.play.test_api import play_to_the_end, sit

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
GAMES = 20
WEB_GAMES = 2  # the tournament the web server plays
ENGINES = 2
SERVICES = ["redis", "engine", "engine-people", "bots", "matchmaker", "replay-server"]

pytestmark = pytest.mark.slow


def _run(argv: list[str], timeout: float, env: dict[str, str] | None = None) -> str:
    out = subprocess.run(
        argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert out.returncode == 0, f"{' '.join(argv[:6])}: exit {out.returncode}\n{out.stderr[-3000:]}"
    return out.stdout


def docker_missing() -> str | None:
    """Why this machine cannot run the stack (one line), or None."""
    if shutil.which("docker") is None:
        return "no docker client on PATH"
    info = subprocess.run(["docker", "info"], capture_output=True, text=True, check=False)
    if info.returncode != 0:
        return "no Docker engine answers (docker info failed): start dockerd to run this"
    if compose_command() is None:
        return "neither `docker compose` nor docker-compose is installed"
    return None


def compose_command() -> list[str] | None:
    """`docker compose` (the plugin) if it is there, else docker-compose (v1, Debian's)."""
    plugin = subprocess.run(["docker", "compose", "version"], capture_output=True, check=False)
    if plugin.returncode == 0:
        return ["docker", "compose"]
    return ["docker-compose"] if shutil.which("docker-compose") else None


class Stack:
    """The compose project of one test run: its own name, port, secrets and volumes."""

    def __init__(self, secrets_dir: Path) -> None:
        self.project = f"arenatest{os.getpid()}"
        self.port = free_port()
        env_file = _run([str(DEPLOY / "secrets.sh"), str(secrets_dir)], 60).strip()
        made = dict(
            line.split("=", 1) for line in Path(env_file).read_text().splitlines() if "=" in line
        )
        self.pubkey = made["ARENA_ARCHIVE_PUBKEY"]
        self.redis_password = made["ARENA_REDIS_PASSWORD"]
        self.env = {
            **os.environ,
            **made,
            "ARENA_REDIS_IMAGE": os.environ.get("ARENA_REDIS_IMAGE", "arena-redis:7"),
            "ARENA_HTTP_PORT": str(self.port),
        }
        compose = compose_command()
        assert compose is not None
        self.compose = [*compose, "-p", self.project, "-f", str(DEPLOY / "docker-compose.yml")]

    def __call__(self, *args: str, timeout: float = 300) -> str:
        return _run([*self.compose, *args], timeout, self.env)

    def containers(self) -> list[dict[str, Any]]:
        """`docker inspect` of every container of the project (stopped ones too)."""
        ids = _run(
            [
                "docker",
                "ps",
                "-aq",
                "--filter",
                f"label=com.docker.compose.project={self.project}",
            ],
            60,
        ).split()
        found: list[dict[str, Any]] = json.loads(_run(["docker", "inspect", *ids], 60))
        return found

    def service(self, c: dict[str, Any]) -> str:
        return str(c["Config"]["Labels"]["com.docker.compose.service"])


@pytest.fixture(scope="module")
def images() -> dict[str, float]:
    """deploy/build.sh run once for the module (skipped where no Docker engine answers)."""
    reason = docker_missing()
    if reason is not None:
        pytest.skip(reason)
    # the last commit, not the working tree: in a tree several people edit at once, a
    # half-done change of someone else's would break the image (ARENA_DEPLOY_TEST_REF: another)
    ref = os.environ.get("ARENA_DEPLOY_TEST_REF", "HEAD")
    commit = _run(["git", "rev-parse", "--verify", f"{ref}^{{commit}}"], 60).strip()
    if os.environ.get("ARENA_DEPLOY_TEST_BUILT") == "1":  # iterating on the tests alone
        built = built_from()
        if built == commit:
            print(f"\nusing the images built before from {commit[:10]} (ARENA_DEPLOY_TEST_BUILT=1)")
            return {}
        print(f"\nthe image was built from {built or 'nothing known'}, not {commit[:10]}: building")
    t = time.monotonic()
    _run([str(DEPLOY / "build.sh"), "--ref", commit], 1800)
    assert built_from() == commit
    return {"build_s": time.monotonic() - t}


def built_from(image: str = "arena:latest") -> str:
    """The commit arena:latest was built from (build.sh's label), or "" (none, the working
    tree, an image built before the label)."""
    got = subprocess.run(
        [
            "docker",
            "image",
            "inspect",
            "--format",
            '{{index .Config.Labels "org.arena.source"}}',
            image,
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    found = got.stdout.strip() if got.returncode == 0 else ""
    return "" if found in ("worktree", "<no value>") else found


@pytest.fixture(scope="module")
def stack(
    images: dict[str, float], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Stack, dict[str, float]]]:
    """The stack up (two engines) on the built images; torn down with its volumes after."""
    took = dict(images)
    s = Stack(tmp_path_factory.mktemp("secrets") / "deploy")
    try:
        t = time.monotonic()
        s("up", "-d", "--scale", f"engine={ENGINES}", *SERVICES)
        _wait_for_web(s.port, 120)
        took["up_s"] = time.monotonic() - t
        yield s, took
    finally:
        s("down", "-v", "--remove-orphans", "--timeout", "30")


def _wait_for_web(port: int, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        assert time.monotonic() < deadline, f"the web port {port} never answered"
        time.sleep(1)


def test_compose_stack_plays_verifies_and_stops(stack: tuple[Stack, dict[str, float]]) -> None:
    s, took = stack

    # only the web port is published, and Redis refuses a client without the password
    published = {
        (s.service(c), port)
        for c in s.containers()
        for port, binds in (c["NetworkSettings"]["Ports"] or {}).items()
        if binds
    }
    assert published == {("replay-server", "8080/tcp")}, published
    redis = next(c["Name"].lstrip("/") for c in s.containers() if s.service(c) == "redis")
    anonymous = subprocess.run(
        ["docker", "exec", "-e", "REDISCLI_AUTH=", redis, "redis-cli", "ping"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert "NOAUTH" in anonymous.stdout + anonymous.stderr, anonymous
    with urllib.request.urlopen(f"http://127.0.0.1:{s.port}/api/platform-key", timeout=10) as r:
        assert s.pubkey in r.read().decode()

    # a tournament through the stack's own engine and bot workers
    t = time.monotonic()
    result = json.loads(
        s(
            "run",
            "--rm",
            "-T",
            "arena",
            "tournament",
            "--deployed",
            "/data/archive",
            "--games",
            str(GAMES),
            "--json",
            timeout=900,
        )
    )
    took["tournament_s"] = time.monotonic() - t
    assert result["games_done"] == result["games_played_now"] == GAMES, result
    assert result["platform"].startswith("deployed")

    # a person plays through the published web port: a guest at a table with a bot, every
    # decision of the seat answered until the game ends (the web server sends the answers to
    # the engines, the matchmaker formed the table); its archive is verified below
    t = time.monotonic()
    base = f"http://127.0.0.1:{s.port}"
    person = asyncio.run(_person_plays(base))
    took["person_game_s"] = time.monotonic() - t
    assert person["ended"] and person["decisions"] > 0 and person["hidden_ok"], person
    assert person["answers"] and set(person["answers"]) <= person["shown"]

    # an organiser has the web server play a tournament: it writes the spec, journal and lock
    # in its tournaments folder, a volume (the page's results are read from that journal)
    t = time.monotonic()
    token = json.loads(
        s("run", "--rm", "-T", "arena", "organiser-token", "create", "Olga", "--json")
    )["token"]
    body = {"ruleset": "chengtian", "players": 2, "entrants": ["random"], "games": WEB_GAMES}
    status, made = http("POST", f"{base}/api/tournaments", token, body)
    assert status == 201 and made["host"] == "web", made
    web_games = _tournament_done(base, made["key"], WEB_GAMES, 300)
    took["web_tournament_s"] = time.monotonic() - t
    journal = s("exec", "-T", "replay-server", "ls", "/data/tournaments")
    assert f"{made['key']}.jsonl" in journal.split(), journal
    played = [person["game"], *web_games]

    # every archive verifies against the platform key; another key refuses them
    t = time.monotonic()
    script = (
        # the games just finished may still be being archived: wait for their files
        "for g in $PLAYED; do i=0; while [ ! -e /data/archive/$g.arena ] && [ $i -lt 60 ]; "
        "do sleep 0.5; i=$((i+1)); done; done; "
        'set -e; for f in /data/archive/*.arena; do arena verify --json "$f"; done; '
        'if arena verify --json --key "$OTHER" "$f"; then echo OTHER-KEY-PASSED; fi'
    )
    other_hex = Signer.generate().public.hex  # a key that signed none of them
    out = s(
        "run",
        "--rm",
        "-T",
        "-e",
        f"OTHER={other_hex}",
        "-e",
        f"PLAYED={' '.join(played)}",
        "--entrypoint",
        "sh",
        "arena",
        "-c",
        script,
        timeout=600,
    )
    took["verify_s"] = time.monotonic() - t
    assert "OTHER-KEY-PASSED" not in out
    *reports, other = _json_objects(out)
    assert len(reports) == GAMES + 1 + WEB_GAMES
    for rep in reports:
        assert rep["ok"] and rep["signature"] == "valid", rep
    verified = json.dumps(reports)
    assert all(g in verified for g in played), played
    # and the web server serves the person's game from the archive, verified
    status, report = http("GET", f"{base}/api/games/{person['game']}/verify")
    assert status == 200 and report["ok"], report
    assert not other["ok"] and other["signature"] == "invalid", other  # the last file again
    assert "another key" in json.dumps(other)

    # a clean stop: every container exits 0; each engine's summary shows it wrote game logs
    t = time.monotonic()
    s("stop", "--timeout", "30")
    took["stop_s"] = time.monotonic() - t
    appends, pushes = {}, {}
    for c in s.containers():
        name = c["Name"].lstrip("/")
        assert not c["State"]["Running"] and c["State"]["ExitCode"] == 0, (name, c["State"])
        if s.service(c) == "engine":
            last = json.loads(_run(["docker", "logs", name], 60).strip().splitlines()[-1])
            appends[name] = last["batched"]["append_calls"]["appends"]
            pushes[name] = last["batched"]["session_pushes"]
    assert len(appends) == ENGINES and all(n > 0 for n in appends.values()), appends
    # the bot worker resolved `engine` to both containers and held a session to each (given
    # the name as one gRPC target it had one, to one engine: the other pushed nothing)
    assert all(n > 0 for n in pushes.values()), pushes
    print(
        json.dumps(
            {
                "took": {k: round(v, 1) for k, v in took.items()},
                "engine_appends": appends,
                "engine_session_pushes": pushes,
                "games": GAMES,
                "load": os.getloadavg(),
            }
        )
    )


async def _person_plays(base: str) -> dict[str, Any]:
    """A guest sits at a two-seat table with a bot and answers every decision until the end;
    what the seat saw (tests/play/test_api.py), and its game."""
    client = await Client.fetch(base)
    game, seat = await sit(client, {"ruleset": "chengtian", "players": 2, "bot_level": "normal"})
    seen = await asyncio.wait_for(play_to_the_end(client, game, seat, random.Random(4)), 300)
    return {**seen, "game": game}


def _tournament_done(base: str, key: str, games: int, seconds: float) -> list[str]:
    """The games of the web server's tournament ``key`` once all are in its journal."""
    deadline = time.monotonic() + seconds
    while True:
        status, t = http("GET", f"{base}/api/tournaments/{key}")
        assert status == 200, t
        if t["summary"]["done"] >= games and not t["summary"]["running"]:
            assert "error" not in t["spec"], t["spec"]  # (the page shows a failure there)
            return [r["game"] for r in t["results"]]
        assert "error" not in t["spec"] and time.monotonic() < deadline, (t["summary"], t["spec"])
        time.sleep(1)


def _json_objects(text: str) -> list[Any]:
    """The JSON documents printed one after another (`arena verify --json`, indented)."""
    decoder, out, i = json.JSONDecoder(), [], 0
    while (i := text.find("{", i)) >= 0:
        doc, i = decoder.raw_decode(text, i)
        out.append(doc)
    return out


# ---- the Kubernetes manifests, run in the image ---------------------------------------------


def _arena_containers(docs: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    return [
        (d["metadata"]["name"], c)
        for d in docs
        for c in d.get("spec", {}).get("template", {}).get("spec", {}).get("containers", [])
        if c["image"].startswith("arena")
    ]


class Pods:
    """What a kubelet would do with the manifests' Redis and Arena containers, done with docker:
    each container's args on the image, its environment (ConfigMap, Secrets, `$(VAR)`
    expansion), its user, read-only root, capabilities and volumes (emptyDir, the archive
    claim, Secret items with their mode and the pod's fsGroup), on one network where each
    Service's name resolves to its pods; then its readiness probe, run in the container."""

    def __init__(self, docs: list[dict[str, Any]], folder: Path, redis_image: str) -> None:
        self.docs, self.folder, self.redis_image = docs, folder, redis_image
        self.prefix = f"arenak8s{os.getpid()}"
        self.started: list[str] = []
        signer = Signer.generate()
        self.config = next(d["data"] for d in docs if d["metadata"]["name"] == "arena-config")
        self.secrets = {
            "arena-secret": {"ARENA_SECRET": os.urandom(32).hex()},
            "arena-redis": {"REDIS_PASSWORD": os.urandom(32).hex()},
            "arena-archive-key": {
                "archive.key": signer.pem().decode(),
                "ARENA_ARCHIVE_PUBKEY": signer.public.hex,
            },
        }
        _run(["docker", "network", "create", self.prefix], 60)

    def close(self) -> None:
        for name in self.started:
            subprocess.run(["docker", "rm", "-f", "-v", name], capture_output=True, check=False)
        subprocess.run(["docker", "network", "rm", self.prefix], capture_output=True, check=False)
        vols = _run(["docker", "volume", "ls", "-q", "--filter", f"name={self.prefix}"], 60)
        for v in vols.split():
            subprocess.run(["docker", "volume", "rm", v], capture_output=True, check=False)

    def env(self, c: dict[str, Any]) -> dict[str, str]:
        out: dict[str, str] = {}
        for ref in c.get("envFrom", []):
            if "configMapRef" in ref:
                out.update(self.config)
            else:
                out.update(self.secrets[ref["secretRef"]["name"]])
        for e in c.get("env", []):
            if "value" in e:  # $(NAME) of a name defined before it, as the kubelet expands it
                out[e["name"]] = _expand(e["value"], out)
            else:
                ref = e["valueFrom"]["secretKeyRef"]
                out[e["name"]] = self.secrets[ref["name"]][ref["key"]]
        return out

    def service_of(self, labels: dict[str, str]) -> str:
        return next(
            d["metadata"]["name"]
            for d in self.docs
            if d["kind"] == "Service"
            and all(labels.get(k) == v for k, v in d["spec"]["selector"].items())
        )

    def start(self, workload: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        pod = workload["spec"]["template"]["spec"]
        (c,) = pod["containers"]
        labels = workload["spec"]["template"]["metadata"]["labels"]
        name = f"{self.prefix}-{workload['metadata']['name']}"
        argv = ["docker", "run", "-d", "--name", name, "--network", self.prefix]
        argv += ["--network-alias", self.service_of(labels)]
        env = self.env(c)
        for k, v in env.items():
            argv += ["-e", f"{k}={v}"]
        sec, csec = pod.get("securityContext", {}), c.get("securityContext", {})
        if "runAsUser" in sec:
            argv += ["--user", f"{sec['runAsUser']}:{sec.get('runAsGroup', sec['runAsUser'])}"]
        if "fsGroup" in sec:
            argv += ["--group-add", str(sec["fsGroup"])]
        if csec.get("readOnlyRootFilesystem"):
            argv.append("--read-only")
        if csec.get("allowPrivilegeEscalation") is False:
            argv += ["--security-opt", "no-new-privileges"]
        for cap in csec.get("capabilities", {}).get("drop", []):
            argv += ["--cap-drop", cap]
        volumes = {v["name"]: v for v in pod.get("volumes", [])}
        for t in workload["spec"].get("volumeClaimTemplates", []):
            volumes[t["metadata"]["name"]] = {"persistentVolumeClaim": {"claimName": name}}
        for m in c.get("volumeMounts", []):
            argv += self.mount(volumes[m["name"]], m, sec.get("fsGroup"))
        image = c["image"] if c["image"].startswith("arena") else self.redis_image
        command = [_expand(str(a), env) for a in c.get("command", [])]
        args = [_expand(str(a), env) for a in c.get("args", [])]
        if command:  # the image's entrypoint replaced, as Kubernetes' command does
            argv += ["--entrypoint", command[0], image, *command[1:], *args]
        else:
            argv += [image, *args]
        _run(argv, 120)
        self.started.append(name)
        return name, c

    def mount(self, volume: dict[str, Any], m: dict[str, Any], fs_group: int | None) -> list[str]:
        ro = ",readonly" if m.get("readOnly") else ""
        if "emptyDir" in volume:
            return ["--tmpfs", f"{m['mountPath']}:mode=1777"]
        if "persistentVolumeClaim" in volume:
            claim = f"{self.prefix}-{volume['persistentVolumeClaim']['claimName']}"
            return ["--mount", f"type=volume,source={claim},target={m['mountPath']}{ro}"]
        secret = volume["secret"]
        folder = self.folder / m["name"]
        folder.mkdir(exist_ok=True)
        for item in secret["items"]:
            path = folder / item["path"]
            path.write_text(self.secrets[secret["secretName"]][item["key"]])
            os.chown(path, 0, fs_group if fs_group is not None else 0)
            path.chmod(secret.get("defaultMode", 0o644))
        return ["--mount", f"type=bind,source={folder},target={m['mountPath']},readonly"]

    def ready(self, name: str, c: dict[str, Any], seconds: float) -> float:
        """Seconds until the readiness probe passed (run in the container, as the kubelet
        would from outside); fails with the container's log if it never does."""
        probe = c["readinessProbe"]
        if "exec" in probe:
            check = probe["exec"]["command"]
        elif "grpc" in probe:
            check = ["python3", "-c", GRPC_PROBE, str(probe["grpc"]["port"])]
        else:
            url = f"http://127.0.0.1:{probe['httpGet']['port']}{probe['httpGet']['path']}"
            check = ["python3", "-c", HTTP_PROBE, url]
        t0 = time.monotonic()
        while True:
            got = subprocess.run(["docker", "exec", name, *check], capture_output=True, check=False)
            if got.returncode == 0:
                return time.monotonic() - t0
            state = json.loads(_run(["docker", "inspect", name], 60))[0]["State"]
            if not state["Running"] or time.monotonic() - t0 > seconds:
                logs = subprocess.run(["docker", "logs", name], capture_output=True, text=True)
                raise AssertionError(f"{name} not ready: {state}\n{logs.stderr[-2000:]}")
            time.sleep(1)


def _expand(text: str, env: dict[str, str]) -> str:
    """The kubelet's $(NAME) expansion in env values, command and args (unknown names stay)."""
    return re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", lambda m: env.get(m[1], m[0]), text)


GRPC_PROBE = """
import sys, grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
with grpc.insecure_channel("127.0.0.1:" + sys.argv[1]) as ch:
    r = health_pb2_grpc.HealthStub(ch).Check(health_pb2.HealthCheckRequest(), timeout=3)
sys.exit(r.status != health_pb2.HealthCheckResponse.SERVING)
"""
HTTP_PROBE = """
import sys, urllib.request
sys.exit(urllib.request.urlopen(sys.argv[1], timeout=3).status != 200)
"""


def test_kubernetes_manifests_run_in_the_image(images: dict[str, float], tmp_path: Path) -> None:
    """Every Deployment and the Redis StatefulSet of k8s/ as the kubelet would run them: each
    becomes ready, and so the args, environment, Secrets, user and read-only root work with the
    image the compose run used."""
    docs = _manifests()
    pods = Pods(docs, tmp_path, os.environ.get("ARENA_REDIS_IMAGE", "arena-redis:7"))
    order = [
        "arena-redis",
        "arena-engine",
        "arena-engine-people",
        "arena-matchmaker",
        "arena-replay",
        "arena-bots",
    ]
    workloads = {
        d["metadata"]["name"]: d for d in docs if d["kind"] in ("Deployment", "StatefulSet")
    }
    assert set(order) == set(workloads) - {"arena-redis-cluster"}
    took = {}
    try:
        for name in order:
            container, spec = pods.start(workloads[name])
            took[name] = round(pods.ready(container, spec, 90), 1)
        # the password holds: Redis refuses a client without it
        anonymous = subprocess.run(
            ["docker", "exec", "-e", "REDISCLI_AUTH=", pods.started[0], "redis-cli", "ping"],
            capture_output=True,
            text=True,
            check=False,
        )
        assert "NOAUTH" in anonymous.stdout + anonymous.stderr
        # a few games through these pods: the engines sign with the mounted key, and every
        # archive verifies against the public half the other pods get
        engine = next(c for _, c in _arena_containers(docs) if c["args"][0] == "engine")
        env = pods.env(engine)
        script = (
            "set -e; arena tournament --deployed /data/archive --games 4 --players 4 --json "
            "--var /tmp/var > /tmp/result; "
            # the tournament reads a game just finished from its live log: its archive file
            # may still be being written (one run verified 3 of the 4)
            "i=0; while [ $(ls /data/archive | grep -c '[.]arena$') -lt 4 ] && [ $i -lt 60 ]; "
            "do sleep 0.5; i=$((i+1)); done; "
            'for f in /data/archive/*.arena; do arena verify "$f"; done; cat /tmp/result'
        )
        out = _run(
            [
                *["docker", "run", "--rm", "--network", pods.prefix, "--user", "10001:10001"],
                *["-e", f"REDIS_URL={env['REDIS_URL']}"],
                *[
                    "-e",
                    f"ARENA_ARCHIVE_PUBKEY={pods.secrets['arena-archive-key']['ARENA_ARCHIVE_PUBKEY']}",
                ],
                *[
                    "--mount",
                    f"type=volume,source={pods.prefix}-arena-archive,target=/data/archive",
                ],
                *["--entrypoint", "sh", "arena:latest", "-c", script],
            ],
            600,
        )
        lines = out.strip().splitlines()
        assert sum("OK (chain, seed commitment, replay, signed by" in x for x in lines) == 4, out
        assert json.loads(lines[-1])["games_done"] == 4
        # a person plays through the web server's pod (its address on the pods' network, as
        # the Ingress would reach it): the play API is mounted and reaches the matchmaker and
        # the engines; its tournaments folder is a volume its user writes
        replay = f"{pods.prefix}-arena-replay"
        net = json.loads(_run(["docker", "inspect", replay], 60))[0]["NetworkSettings"]
        ip = net["Networks"][pods.prefix]["IPAddress"]
        t0 = time.monotonic()
        person = asyncio.run(_person_plays(f"http://{ip}:8080"))
        took["person_game_s"] = round(time.monotonic() - t0, 1)
        assert person["ended"] and person["decisions"] > 0, person
        _run(
            [
                "docker",
                "exec",
                replay,
                "sh",
                "-c",
                "touch /data/tournaments/w && rm /data/tournaments/w",
            ],
            60,
        )
        for name in pods.started:  # all still running after every probe passed
            assert json.loads(_run(["docker", "inspect", name], 60))[0]["State"]["Running"]
    finally:
        pods.close()
    print(json.dumps({"kubernetes_ready_s": took, "load": os.getloadavg()}))
