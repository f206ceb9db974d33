"""`arena fit likelihoods` (services/bots/fit.py): the command that writes
services/bots/likelihoods.py prints a module of the same shape as the committed one."""

from __future__ import annotations

import pytest

from services.bots import likelihoods
from services.bots.roles import POOLED
from services.cli import main


def test_fit_likelihoods_prints_a_module_like_the_committed_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["fit", "likelihoods", "--games", "1", "--seed", "10000"]) == 0
    out, _ = capsys.readouterr()
    module: dict[str, object] = {}
    exec(compile(out, "likelihoods.py", "exec"), module)
    rates = module["RATES"]
    assert isinstance(rates, dict) and rates
    assert "arena fit likelihoods --games 1" in str(module["__doc__"])
    # the keys read by the belief: the same (table, bucket, kind, actor, target) shape, pooled
    # rates among them, each a probability
    assert {len(k) for k in rates} == {5}
    assert {k[2] for k in rates} <= {"hostile", "friendly"}
    assert any(k[0] == POOLED for k in rates)
    assert all(0.0 < v <= 1.0 for v in rates.values())
    assert {k[0] for k in rates} <= {k[0] for k in likelihoods.RATES}


def test_fit_refuses_no_games(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["fit", "value", "--games", "0"])
    assert exit_.value.code == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1 and "--games" in err, err
