"""The order in which the default suite's two processes take the test files (`-n 2 --dist
loadfile`, the README's command): the longest first.

pytest-xdist hands out whole files, and by default the files with the most tests first. Many of
the longest files hold one or two tests (the chaos tournament, the bounded-Redis run, a browser's
whole game, the cluster failover), so they came last, and one process ran the last of them
while the other had nothing left: the suite's time was the longer process's. Taken longest
first, the short files at the end even the two out.

`SECONDS` is each long file's rough time on a quiet 2-core machine in the full suite (a full
run's `--durations=0` summed by file, scaled to a quiet machine); it only orders the queue, so a
stale figure costs a few seconds at worst, never a test. Files not named here follow, the most tests first (xdist's own
order).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

SECONDS = {
    "tests/play/test_api.py": 31,
    "tests/bots/test_worker.py": 29,
    "tests/secrecy/test_noninterference.py": 24,
    "tests/browser/test_play.py": 19,
    "tests/browser/test_watch.py": 18,
    "tests/engine/test_hung.py": 14,
    "tests/platform/test_tournament.py": 12,
    "tests/test_cli_errors.py": 12,
    "tests/platform/test_chaos.py": 11,
    "tests/platform/test_readme_commands.py": 11,
    "tests/cluster/test_failover_tournament.py": 11,
    "tests/botapi/test_botapi.py": 10,
    "tests/tournaments/test_web.py": 9,
    "tests/browser/test_session.py": 9,
    "tests/cluster/test_cluster_nodes.py": 9,
    "tests/secrecy/test_fuzz.py": 8,
    "tests/browser/test_viewer.py": 8,
    "tests/replay/test_metrics.py": 8,
    "tests/cluster/test_wait.py": 8,
    "tests/browser/test_whole_game_chengtian.py": 7,
    "tests/platform/test_bounded.py": 7,
    "tests/play/test_session.py": 7,
    "tests/cluster/test_cluster_basics.py": 7,
    "tests/browser/test_whole_game_standard.py": 7,
    "tests/browser/test_whole_game_jinyu.py": 7,
    "tests/browser/test_whole_game_extended.py": 6,
    "tests/rules/test_extended.py": 6,
    "tests/play/test_soak.py": 6,
    "tests/browser/test_whole_game_honglou.py": 6,
    "tests/play/test_demo.py": 6,
    "tests/platform/test_up.py": 6,
    "tests/platform/test_supervise.py": 6,
    "tests/browser/test_fold.py": 5,
    "tests/play/test_edges.py": 5,
    "tests/deploy/test_deploy.py": 5,
    "tests/rules/test_skill_index.py": 5,
    "tests/play/test_fuzz_routes.py": 4,
    "tests/bots/test_rulesets.py": 4,
    "tests/rules/test_chengtian.py": 4,
    "tests/engine/test_e2e.py": 4,
    "tests/platform/test_soak.py": 4,
    "tests/browser/test_csrf.py": 4,
    "tests/deploy/test_tournament_deployed.py": 4,
    "tests/rules/test_jinyu.py": 4,
    "tests/bots/test_blunders.py": 4,
    "tests/readside/test_chart.py": 3,
    "tests/browser/test_decision.py": 3,
    "tests/rules/test_properties.py": 3,
    "tests/bots/test_heuristic.py": 2,
    "tests/rules/test_honglou.py": 1,
}


def longest_first(queue: OrderedDict[str, Any]) -> OrderedDict[str, Any]:
    """`queue` (file -> its tests, as xdist keeps them) reordered: the files of `SECONDS`,
    longest first, then the rest in their order."""
    order = sorted(queue, key=lambda f: -SECONDS.get(f, 0))  # (stable: the rest keep theirs)
    return OrderedDict((f, queue[f]) for f in order)


def make_scheduler(config: Any, log: Any) -> Any:
    """xdist's loadfile scheduler, taking the files longest first; None (xdist's own) for the
    other `--dist` modes, or an xdist without the method this reorders in."""
    from xdist.scheduler import LoadFileScheduling

    if config.getvalue("dist") != "loadfile" or not hasattr(
        LoadFileScheduling, "_assign_work_unit"
    ):
        return None

    class LongestFirst(LoadFileScheduling):  # type: ignore[misc]
        ordered = False

        def _assign_work_unit(self, node: Any) -> None:
            if not self.ordered:  # the first assignment: the queue is complete
                self.workqueue = longest_first(self.workqueue)
                self.ordered = True
            super()._assign_work_unit(node)

    return LongestFirst(config, log)
