"""deploy/ as far as this machine can check it (no Docker, no cluster): every file parses, every
service named is an `arena` command whose flags exist, ports and environment names agree with
the code, the alert rules and the Prometheus config pass promtool, the dashboard's metrics exist.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from services.cli import COMMANDS, parser
from services.targets import is_name

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
SERVICES = ROOT / "services"


def _docs(path: Path) -> list[Any]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d is not None]


def _manifests() -> list[dict[str, Any]]:
    return [d for p in sorted((DEPLOY / "k8s").glob("*.yaml")) for d in _docs(p)]


def _compose() -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
    return doc


@cache
def _help(command: str) -> str:
    out = subprocess.run(
        [sys.executable, "-m", "services.cli", command, "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def _flags(args: list[str]) -> list[str]:
    return [a.split("=", 1)[0] for a in args if a.startswith("--")]


def _arena_lines() -> list[tuple[str, list[str]]]:
    """(where, argv after `arena`) of every Arena container in compose and the manifests."""
    out = []
    for name, svc in _compose()["services"].items():
        if "command" in svc and svc.get("image", "").startswith("arena"):
            out.append((f"compose:{name}", [str(a) for a in svc["command"]]))
    for doc in _manifests():
        for c in _containers(doc):
            if c["image"].startswith("arena"):
                out.append((f"k8s:{doc['metadata']['name']}", [str(a) for a in c["args"]]))
    return out


def _containers(doc: dict[str, Any]) -> list[dict[str, Any]]:
    spec = doc.get("spec", {}).get("template", {}).get("spec", {})
    return list(spec.get("containers", []))


def _flag(args: list[str], name: str) -> str | None:
    return args[args.index(name) + 1] if name in args else None


def test_every_file_parses() -> None:
    files = list(DEPLOY.rglob("*"))
    assert (DEPLOY / "Dockerfile").read_text().count("ENTRYPOINT") == 1
    for p in files:
        if p.suffix in (".yml", ".yaml"):
            assert _docs(p), p
        elif p.suffix == ".json":
            json.loads(p.read_text())
    kinds = {d["kind"] for d in _manifests()}
    assert {
        "ConfigMap",
        "StatefulSet",
        "Deployment",
        "Service",
        "HorizontalPodAutoscaler",
        "PersistentVolumeClaim",
    } <= kinds


def test_every_service_is_an_arena_command_with_those_flags() -> None:
    lines = _arena_lines()
    named = {argv[0] for _, argv in lines}
    assert {"engine", "bots", "matchmaker", "replay-server"} <= named
    for where, argv in lines:
        assert argv[0] in COMMANDS, f"{where}: arena {argv[0]} does not exist"
        text = _help(argv[0])
        for flag in _flags(argv[1:]):
            assert flag in text, f"{where}: arena {argv[0]} has no {flag}"
    compose = _compose()["services"]
    assert {"redis", "prometheus", "grafana"} <= set(compose)
    assert "--appendonly" in compose["redis"]["command"]


def test_hpa_for_stateless_workers() -> None:
    hpas = {
        d["spec"]["scaleTargetRef"]["name"]
        for d in _manifests()
        if d["kind"] == "HorizontalPodAutoscaler"
    }
    assert hpas == {"arena-engine", "arena-bots"}


def test_ports_agree_with_the_code_and_each_other() -> None:
    # defaults in the code: engine gRPC 50051, matchmaker 50052, replay HTTP 8080
    defaults = {
        command: vars(parser().parse_args([command]))
        for command in ("engine", "matchmaker", "replay-server")
    }
    assert defaults["engine"]["port"] == 50051
    assert defaults["matchmaker"]["port"] == 50052
    assert defaults["replay-server"]["http_port"] == 8080
    expected = {
        "engine": {"--port": "50051", "--metrics-port": "9100"},
        "bots": {"--metrics-port": "9101"},
        "matchmaker": {"--port": "50052", "--metrics-port": "9102"},
        "replay-server": {"--http-port": "8080", "--port": "50053", "--metrics-port": "9103"},
    }
    for where, argv in _arena_lines():
        for flag, port in expected[argv[0]].items():
            assert _flag(argv, flag) == port, (where, flag)
    for doc in _manifests():  # every flag port is a containerPort; every Service port targets one
        for c in _containers(doc):
            declared = {p["containerPort"] for p in c.get("ports", [])}
            for flag in ("--port", "--metrics-port", "--http-port"):
                value = _flag([str(a) for a in c.get("args", [])], flag)
                if value is not None:
                    assert int(value) in declared, (doc["metadata"]["name"], flag)
    pods = {
        d["metadata"]["name"]: {
            p["containerPort"] for c in _containers(d) for p in c.get("ports", [])
        }
        for d in _manifests()
        if d["kind"] in ("Deployment", "StatefulSet")
    }
    for d in _manifests():
        if d["kind"] == "Service":
            for p in d["spec"]["ports"]:
                assert p["targetPort"] in pods[d["metadata"]["name"]], d["metadata"]["name"]
    prom = yaml.safe_load((DEPLOY / "prometheus" / "prometheus.yml").read_text())
    scraped = {
        c["dns_sd_configs"][0]["names"][0]: c["dns_sd_configs"][0]["port"]
        for c in prom["scrape_configs"]
    }
    assert scraped == {
        "engine": 9100,
        "engine-people": 9100,
        "bots": 9101,
        "matchmaker": 9102,
        "replay-server": 9103,
    }
    for name, port in scraped.items():  # each scraped compose service serves /metrics there
        assert _flag(_compose()["services"][name]["command"], "--metrics-port") == str(port)
        assert str(port) in _compose()["services"][name].get("expose", []), name
    engine_addr = _flag(_compose()["services"]["bots"]["command"], "--engine")
    assert engine_addr == "engine:50051"
    docker = (DEPLOY / "Dockerfile").read_text()
    exposed = {
        p for line in docker.splitlines() if line.startswith("EXPOSE") for p in line.split()[1:]
    }
    flagged = {
        _flag(argv, f)
        for _, argv in _arena_lines()
        for f in ("--port", "--metrics-port", "--http-port")
    }
    assert flagged - {None} <= exposed, "a port the image does not EXPOSE"


def test_prometheus_scrapes_every_metrics_port_under_the_alerts_job_names() -> None:
    """Kubernetes pods are scraped through their annotations, compose services by name; both
    give the same job names (the Kubernetes app name), which alerts.yml uses."""
    prom = yaml.safe_load((DEPLOY / "prometheus" / "prometheus.yml").read_text())
    compose_jobs = {c["job_name"] for c in prom["scrape_configs"]}
    k8s_jobs = set()
    for d in _manifests():
        for c in _containers(d):
            port = _flag([str(a) for a in c.get("args", [])], "--metrics-port")
            if port is None:
                continue
            notes = d["spec"]["template"]["metadata"].get("annotations", {})
            assert notes.get("prometheus.io/scrape") == "true", d["metadata"]["name"]
            assert notes.get("prometheus.io/port") == port, d["metadata"]["name"]
            k8s_jobs.add(d["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/name"])
    assert (
        compose_jobs
        == k8s_jobs
        == {"arena-engine", "arena-engine-people", "arena-bots", "arena-matchmaker", "arena-replay"}
    )
    rules = yaml.safe_load((DEPLOY / "prometheus" / "alerts.yml").read_text())["groups"]
    alerted = {
        j for g in rules for r in g["rules"] for j in re.findall(r'job="([^"]+)"', r["expr"])
    }
    assert alerted == compose_jobs, f"a scraped job without an up-alert: {alerted}"


def test_replay_server_asks_the_engine_for_pending_decisions() -> None:
    """`--engine` names the engine's address as each deployment defines it: the compose service
    and the Kubernetes Service, on the engine's gRPC port."""
    compose = _compose()["services"]
    addr = _flag(compose["replay-server"]["command"], "--engine")
    assert addr == f"engine:{_flag(compose['engine']['command'], '--port')}"
    services = {
        d["metadata"]["name"]: {p["port"] for p in d["spec"]["ports"]}
        for d in _manifests()
        if d["kind"] == "Service"
    }
    found = [
        argv
        for where, argv in _arena_lines()
        if where.startswith("k8s:") and argv[0] == "replay-server"
    ]
    assert found
    for argv in found:
        host, _, port = (_flag(argv, "--engine") or "").partition(":")
        assert host == "arena-engine" and int(port) in services[host], argv
        assert port == "50051"


def test_the_web_server_serves_play_and_tournaments() -> None:
    """People can play in both deployments, not only watch: the web server gets the matchmaker
    (without `--matchmaker` the play API, the Bot API and tournaments are not mounted) at the
    matchmaker's own address and port, and a tournaments folder on a volume it may write (the
    Kubernetes root is read-only; the replicas share one claim, ReadWriteMany) and that the
    image makes and gives its user (a fresh named volume copies the folder's owner)."""
    compose = _compose()
    svc = compose["services"]
    web = [str(a) for a in svc["replay-server"]["command"]]
    assert (
        _flag(web, "--matchmaker") == f"matchmaker:{_flag(svc['matchmaker']['command'], '--port')}"
    )
    folder = _flag(web, "--tournaments")
    assert folder is not None and folder.startswith("/data/")
    mounts = dict(reversed(v.split(":", 1)) for v in svc["replay-server"]["volumes"])
    assert mounts[folder] in compose["volumes"], mounts  # a named volume, kept across restarts
    assert "/data/archive" in mounts  # (its own `volumes` replace x-arena's: the archive kept)
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    assert re.search(
        rf"mkdir -p [^&]*{re.escape(folder)}[^&]*&& chown -R arena:arena /data", dockerfile
    )

    docs = _manifests()
    mm = next(
        d for d in docs if d["kind"] == "Service" and d["metadata"]["name"] == "arena-matchmaker"
    )
    mm_grpc = next(p["port"] for p in mm["spec"]["ports"] if p["name"] == "grpc")
    claims = {d["metadata"]["name"]: d for d in docs if d["kind"] == "PersistentVolumeClaim"}
    replay = next(
        d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] == "arena-replay"
    )
    [c] = _containers(replay)
    args = [str(a) for a in c["args"]]
    assert _flag(args, "--matchmaker") == f"arena-matchmaker:{mm_grpc}"
    folder = _flag(args, "--tournaments")
    mount = next(m for m in c["volumeMounts"] if m["mountPath"] == folder)
    assert not mount.get("readOnly", False)
    assert c["securityContext"]["readOnlyRootFilesystem"]  # so the folder must be a volume
    volume = next(
        v for v in replay["spec"]["template"]["spec"]["volumes"] if v["name"] == mount["name"]
    )
    claim = claims[volume["persistentVolumeClaim"]["claimName"]]
    assert claim["spec"]["accessModes"] == ["ReadWriteMany"] or replay["spec"]["replicas"] == 1


def test_the_engines_are_one_name_that_resolves_to_every_engine() -> None:
    """The bot workers and the web server get the engines as one DNS name and resolve it to
    every engine themselves (services/targets.py): compose's service name (every container of
    the service, `--scale engine=N`), and in Kubernetes a headless Service (every ready pod;
    a virtual IP would be one address, and every call of a client one pod's)."""
    compose = _compose()["services"]
    assert "container_name" not in compose["engine"] and "hostname" not in compose["engine"]
    port = _flag(compose["engine"]["command"], "--port")
    named = {
        _flag([str(a) for a in compose[s]["command"]], "--engine")
        for s in ("bots", "replay-server")
    }
    named.add(compose["bots"]["environment"]["ARENA_ENGINE"])  # (from x-arena)
    assert named == {f"engine:{port}"} and is_name(f"engine:{port}")
    docs = _manifests()
    service = next(
        d for d in docs if d["kind"] == "Service" and d["metadata"]["name"] == "arena-engine"
    )
    deployment = next(
        d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] == "arena-engine"
    )
    assert service["spec"].get("clusterIP") == "None"  # headless
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()
    [engine] = _containers(deployment)
    k8s_port = int(_flag([str(a) for a in engine["args"]], "--port") or 0)
    grpc = next(p for p in service["spec"]["ports"] if p["name"] == "grpc")
    # a headless Service maps no port: a client connects to the pod's own
    assert grpc["port"] == grpc["targetPort"] == k8s_port
    named = {
        _flag(argv, "--engine") for where, argv in _arena_lines() if where.startswith("k8s:")
    } - {None}
    config = next(
        d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"] == "arena-config"
    )
    named.add(config["data"]["ARENA_ENGINE"])
    assert named == {f"arena-engine:{k8s_port}"}


def test_the_peoples_engines_serve_the_people_in_both_deployments() -> None:
    """Issue 44: a people's engine (`--role people`) under a name of its own, headless in
    Kubernetes, given as `--people-engine` on its gRPC port to the web server and the bot
    workers, and nowhere as `--engine` (else it would take bot-only games too)."""
    compose = _compose()["services"]
    people = [str(a) for a in compose["engine-people"]["command"]]
    assert people[0] == "engine" and _flag(people, "--role") == "people"
    assert _flag([str(a) for a in compose["engine"]["command"]], "--role") is None
    port = _flag(people, "--port")
    for s in ("bots", "replay-server"):
        argv = [str(a) for a in compose[s]["command"]]
        assert _flag(argv, "--people-engine") == f"engine-people:{port}", s
        assert _flag(argv, "--engine") == "engine:50051", s
    docs = _manifests()
    service = next(
        d for d in docs if d["kind"] == "Service" and d["metadata"]["name"] == "arena-engine-people"
    )
    deployment = next(
        d
        for d in docs
        if d["kind"] == "Deployment" and d["metadata"]["name"] == "arena-engine-people"
    )
    assert service["spec"].get("clusterIP") == "None"
    assert (
        service["spec"]["selector"].items()
        <= deployment["spec"]["template"]["metadata"]["labels"].items()
    )
    [engine] = _containers(deployment)
    args = [str(a) for a in engine["args"]]
    assert args[0] == "engine" and _flag(args, "--role") == "people"
    k8s_port = _flag(args, "--port")
    lines = {argv[0]: argv for where, argv in _arena_lines() if where.startswith("k8s:")}
    for command in ("bots", "replay-server"):
        assert _flag(lines[command], "--people-engine") == f"arena-engine-people:{k8s_port}"
    # the general engines' name selects no people's engine
    general = next(
        d for d in docs if d["kind"] == "Service" and d["metadata"]["name"] == "arena-engine"
    )
    assert (
        not general["spec"]["selector"].items()
        <= deployment["spec"]["template"]["metadata"]["labels"].items()
    )


def test_env_names_agree_with_the_code() -> None:
    """Every variable an Arena container gets is read by the services, or only goes into another
    variable's value there (Kubernetes' $(NAME): REDIS_URL is built from the Redis Secret's
    password and the ConfigMap's address)."""
    code = "\n".join(p.read_text() for p in SERVICES.rglob("*.py"))
    read = set(re.findall(r"os\.environ(?:\.get)?\(\s*\"([A-Z_]+)\"", code))
    read |= set(re.findall(r"^[A-Z_]*ENV\s*=\s*\"([A-Z_]+)\"", code, re.M))  # KEY_ENV = "..."
    compose = _compose()
    used: set[str] = set(compose["x-arena"]["environment"])
    for svc in compose["services"].values():
        if svc.get("image") == compose["x-arena"]["image"]:  # Arena's services, not Grafana
            used |= set(svc.get("environment") or {})
    composing: set[str] = set()
    for d in _manifests():
        if d["kind"] == "ConfigMap" and d["metadata"]["name"] == "arena-config":
            used |= set(d["data"])
        for c in _containers(d):
            if c["image"].startswith("arena"):
                used |= {e["name"] for e in c.get("env", [])}
                for e in c.get("env", []):
                    composing |= set(re.findall(r"\$\(([A-Z_]+)\)", e.get("value", "")))
    assert composing == {"REDIS_PASSWORD", "ARENA_REDIS_ADDRESS"}, composing
    assert used and used - composing <= read, f"not read by any service: {used - read}"
    assert {"REDIS_URL", "ARENA_SECRET", "ARENA_ARCHIVE_KEY", "ARENA_ARCHIVE_PUBKEY"} <= used


def test_the_secret_is_required_and_kept_from_bot_workers() -> None:
    """Secrets fail closed in deployment too: compose has no default ARENA_SECRET (it refuses
    to start without one), and neither compose nor Kubernetes gives it to the bot workers."""
    text = (DEPLOY / "docker-compose.yml").read_text()
    assert ":-" not in re.sub(r"#.*", "", text.split("ARENA_SECRET:", 1)[1].splitlines()[0])
    compose = _compose()["services"]
    signed = {n for n, svc in compose.items() if "ARENA_SECRET" in (svc.get("environment") or {})}
    assert signed == {"engine", "engine-people", "matchmaker", "replay-server"}
    assert "${ARENA_SECRET:?" in text
    for d in _manifests():
        for c in _containers(d):
            if c.get("image") != "arena:latest":
                continue
            refs = {r.get("secretRef", {}).get("name") for r in c.get("envFrom", [])}
            assert ("arena-secret" in refs) == (c["args"][0] != "bots"), c["args"][0]


def test_dashboard_and_alerts_name_real_metrics() -> None:
    code = "\n".join(p.read_text() for p in SERVICES.rglob("*.py"))
    dash = json.loads((DEPLOY / "grafana" / "dashboards" / "arena.json").read_text())
    exprs = [t["expr"] for p in dash["panels"] for t in p["targets"]]
    exprs += [
        r["expr"]
        for g in yaml.safe_load((DEPLOY / "prometheus" / "alerts.yml").read_text())["groups"]
        for r in g["rules"]
    ]
    names = {m for e in exprs for m in re.findall(r"\barena_[a-z_]+", e)}
    assert names
    # the matchmaker's and the replay server's panels
    assert {"arena_matchmaker_tables_formed_total", "arena_replay_spectators"} <= names
    # the shared streams' lag and pending counts (services/redisinfra/trim.py)
    assert {"arena_stream_group_oldest_unacked_seconds", "arena_stream_group_missing"} <= names
    documented = set(re.findall(r"\barena_[a-z_]+", (DEPLOY / "README.md").read_text()))
    assert {"arena_matchmaker_queue_depth", "arena_replay_http_requests"} <= documented
    assert {"arena_stream_group_lag", "arena_stream_group_pending"} <= documented
    names |= documented
    for m in names:
        base = re.sub(r"_(total|bucket|sum|count)$", "", m)
        assert f'"{base}"' in code, f"no metric {base} in services/"


@pytest.fixture(scope="module")
def promtool() -> str:
    """promtool from PATH: Debian's `prometheus` package, which `.ci/run` installs."""
    found = shutil.which("promtool")
    if not found:
        pytest.fail(
            "promtool is not installed: it comes in Debian's package `prometheus` (.ci/run "
            "installs it as root), or put Prometheus's promtool on PATH"
        )
    return found


def test_alert_rules_pass_promtool(promtool: str) -> None:
    """Rules and config check, and the rules' unit tests (alerts_test.yml: the shared streams'
    alerts fire when a group stops acking or is missing, or a stream grows, and not otherwise)."""
    for args in (
        ["check", "rules", "alerts.yml"],
        ["check", "config", "prometheus.yml"],
        ["test", "rules", "alerts_test.yml"],
    ):
        out = subprocess.run(
            [promtool, *args], cwd=DEPLOY / "prometheus", capture_output=True, text=True, timeout=60
        )
        assert out.returncode == 0, out.stdout + out.stderr
