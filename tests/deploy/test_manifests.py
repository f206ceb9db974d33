"""The Kubernetes manifests against Kubernetes' own schemas (kubernetes-validate: the API's
OpenAPI schemas, strict, so an unknown or misspelt field fails), and what compose and the
manifests expose: only the web port is published, Redis has a password everywhere, the
archive-signing key goes to the engines alone, and the pods run as the image's user.

The same manifests run against the image itself in tests/deploy/test_docker_run.py (slow).
"""

from __future__ import annotations

import copy
import re
from typing import Any

import kubernetes_validate
import pytest

from tests.deploy.test_deploy import DEPLOY, _compose, _containers, _manifests

K8S_VERSION = "1.30"  # the oldest Kubernetes these manifests are meant for (grpc probes: 1.27)


def _pod(doc: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = doc.get("spec", {}).get("template", {}).get("spec", {})
    return spec


def _arena_containers() -> list[tuple[str, dict[str, Any]]]:
    return [
        (d["metadata"]["name"], c)
        for d in _manifests()
        for c in _containers(d)
        if c["image"].startswith("arena")
    ]


def test_manifests_pass_the_kubernetes_schemas() -> None:
    docs = _manifests()
    assert len(docs) >= 20
    for doc in docs:
        kubernetes_validate.validate(doc, K8S_VERSION, strict=True)


def test_the_schema_check_fails_a_broken_manifest() -> None:
    """The check can fail: a misspelt field, a wrong type, a missing required field."""
    deployment = next(
        d
        for d in _manifests()
        if d["kind"] == "Deployment" and d["metadata"]["name"] == "arena-engine"
    )
    broken = []
    a = copy.deepcopy(deployment)
    _pod(a)["containers"][0]["containerPorts"] = _pod(a)["containers"][0].pop("ports")
    broken.append(a)
    b = copy.deepcopy(deployment)
    b["spec"]["replicas"] = "two"
    broken.append(b)
    c = copy.deepcopy(deployment)
    del _pod(c)["containers"][0]["name"]
    broken.append(c)
    for doc in broken:
        with pytest.raises(kubernetes_validate.ValidationError):
            kubernetes_validate.validate(doc, K8S_VERSION, strict=True)


def test_only_the_web_port_is_published() -> None:
    """compose publishes the replay server's 8080 and nothing else on every address (Prometheus
    and Grafana on the host's loopback only); Kubernetes has no NodePort, LoadBalancer, host
    port or host network, one Ingress to the web port, and NetworkPolicies that admit only
    Arena's own pods, except 8080 (and /metrics for Prometheus)."""
    published = {}
    for name, svc in _compose()["services"].items():
        for spec in svc.get("ports", []):
            host, _, container = str(spec).rpartition(":")
            published[name] = (host, container)
    assert published["replay-server"] == ("${ARENA_HTTP_PORT:-8080}", "8080")
    others = {n: p for n, p in published.items() if n != "replay-server"}
    assert others and all(host.startswith("127.0.0.1:") for host, _ in others.values()), others
    assert not _compose()["services"]["matchmaker"].get("ports")

    docs = _manifests()
    for d in docs:
        if d["kind"] == "Service":
            assert d["spec"].get("type", "ClusterIP") == "ClusterIP", d["metadata"]["name"]
            assert not d["spec"].get("externalIPs"), d["metadata"]["name"]
        pod = _pod(d)
        assert not pod.get("hostNetwork"), d["metadata"]["name"]
        for c in pod.get("containers", []):
            assert all("hostPort" not in p for p in c.get("ports", [])), d["metadata"]["name"]
    ingresses = [d for d in docs if d["kind"] == "Ingress"]
    backends = {
        (p["backend"]["service"]["name"], p["backend"]["service"]["port"]["name"])
        for i in ingresses
        for r in i["spec"]["rules"]
        for p in r["http"]["paths"]
    }
    assert backends == {("arena-replay", "http")}
    replay = next(
        d for d in docs if d["kind"] == "Service" and d["metadata"]["name"] == "arena-replay"
    )
    assert {p["name"]: p["port"] for p in replay["spec"]["ports"]}["http"] == 8080
    policies = {d["metadata"]["name"]: d["spec"] for d in docs if d["kind"] == "NetworkPolicy"}
    internal = policies["arena-internal"]
    assert internal["podSelector"]["matchLabels"] == {"app.kubernetes.io/part-of": "arena"}
    assert internal["ingress"] == [
        {"from": [{"podSelector": {"matchLabels": {"app.kubernetes.io/part-of": "arena"}}}]}
    ]
    web = policies["arena-web"]
    assert web["ingress"] == [{"ports": [{"port": 8080, "protocol": "TCP"}]}]
    metrics = policies["arena-metrics"]["ingress"][0]
    assert {p["port"] for p in metrics["ports"]} == {9100, 9101, 9102, 9103}
    assert metrics["from"][0]["podSelector"]["matchLabels"]  # Prometheus' pods, not everyone
    for name in ("arena-internal", "arena-web", "arena-metrics"):
        assert policies[name]["policyTypes"] == ["Ingress"]


def test_redis_has_a_password_everywhere() -> None:
    compose = _compose()
    password = "${ARENA_REDIS_PASSWORD:?"
    url = compose["x-arena"]["environment"]["REDIS_URL"]
    assert url.startswith("redis://:" + password) and ":-" not in url.split("@")[0]
    for name in ("redis", "redis-c1", "redis-c2"):
        command = compose["services"][name]["command"]
        assert command[command.index("--requirepass") + 1].startswith(password), name
    assert "--masterauth" in compose["services"]["redis-c1"]["command"]
    redis = [
        (d["metadata"]["name"], c)
        for d in _manifests()
        for c in _containers(d)
        if c["image"].startswith("redis")
    ]
    assert {n for n, _ in redis} == {
        "arena-redis",
        "arena-redis-cluster",
        "arena-redis-cluster-create",
    }
    for name, c in redis:
        env = {e["name"]: e for e in c.get("env", [])}
        line = " ".join(c.get("args", []) + c.get("command", []))
        secret_env = "REDIS_PASSWORD" if "REDIS_PASSWORD" in env else "REDISCLI_AUTH"
        ref = env[secret_env]["valueFrom"]["secretKeyRef"]
        assert ref == {"name": "arena-redis", "key": "REDIS_PASSWORD"}, name
        if name != "arena-redis-cluster-create":
            assert re.search(r"--requirepass \\?\"?\$\(?REDIS_PASSWORD", line), (name, line)
            assert env["REDISCLI_AUTH"]["value"] == "$(REDIS_PASSWORD)"  # the probe's
    config = next(d for d in _manifests() if d["metadata"]["name"] == "arena-config")
    assert "REDIS_URL" not in config["data"]  # a URL there would carry no password
    for name, c in _arena_containers():
        env = {e["name"]: e for e in c.get("env", [])}
        assert env["REDIS_PASSWORD"]["valueFrom"]["secretKeyRef"]["name"] == "arena-redis", name
        assert env["REDIS_URL"]["value"] == "redis://:$(REDIS_PASSWORD)@$(ARENA_REDIS_ADDRESS)"
        names = list(env)  # $(NAME) expands only names defined before it
        assert names.index("REDIS_PASSWORD") < names.index("REDIS_URL"), name


def test_the_archive_key_goes_to_the_engines_alone() -> None:
    """Engines sign archives (the private key, a compose secret or a Secret volume); the web
    server and the matchmaker check them with the public key; bot workers get neither."""
    compose = _compose()["services"]
    keyed = {n for n, s in compose.items() if "ARENA_ARCHIVE_KEY" in (s.get("environment") or {})}
    assert keyed == {"engine", "engine-people"}
    for name in keyed:
        assert compose[name]["secrets"] == ["archive-key"]
        assert compose[name]["environment"]["ARENA_ARCHIVE_KEY"] == "/run/secrets/archive-key"
    for name in ("matchmaker", "replay-server", "arena"):
        assert compose[name]["environment"]["ARENA_ARCHIVE_PUBKEY"].startswith(
            "${ARENA_ARCHIVE_PUBKEY:?"
        )
    for doc in _manifests():
        pod = _pod(doc)
        for c in pod.get("containers", []):
            if not c["image"].startswith("arena"):
                continue
            env = {e["name"]: e for e in c.get("env", [])}
            secret_volumes = {v["name"] for v in pod.get("volumes", []) if "secret" in v}
            command = c["args"][0]
            if command == "engine":
                assert secret_volumes == {"archive-key"}
                mount = next(m for m in c["volumeMounts"] if m["name"] == "archive-key")
                assert env["ARENA_ARCHIVE_KEY"]["value"].startswith(mount["mountPath"] + "/")
            else:
                assert not secret_volumes and "ARENA_ARCHIVE_KEY" not in env, command
            if command in ("matchmaker", "replay-server"):
                ref = env["ARENA_ARCHIVE_PUBKEY"]["valueFrom"]["secretKeyRef"]
                assert ref == {"name": "arena-archive-key", "key": "ARENA_ARCHIVE_PUBKEY"}
            if command == "bots":
                assert "ARENA_ARCHIVE_PUBKEY" not in env


def test_pods_run_as_the_images_user() -> None:
    docker = (DEPLOY / "Dockerfile").read_text()
    user = re.findall(r"^USER (\d+)$", docker, re.M)
    assert user, "the image names its user by number (runAsNonRoot can check a number only)"
    for doc in _manifests():
        pod = _pod(doc)
        if not any(c["image"].startswith("arena") for c in pod.get("containers", [])):
            continue
        sec = pod["securityContext"]
        assert sec["runAsNonRoot"] and str(sec["runAsUser"]) == user[-1], doc["metadata"]["name"]
        for c in pod["containers"]:
            assert c["securityContext"]["readOnlyRootFilesystem"] is True
            assert c["securityContext"]["allowPrivilegeEscalation"] is False
