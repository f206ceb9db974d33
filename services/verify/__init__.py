"""A game's log verified end to end, and games recorded by driving the rules: the part of the
event log that needs the rules (services/layers.py: verify sits above eventlog, with the rules
as a declared dependency; the store itself knows no rules).

- rerun.py: `verify` / `verify_records`: the chain and the origin (eventlog/checks.py), the seed
  commitment, a full re-run through the rules, the reveal and header against the re-run;
- record.py: `record_game`, a whole game recorded into a log by driving the rules (tests,
  benchmarks, demos);
- commands.py: the `arena` commands over stored logs: export, verify, archive, catalog,
  platform-key.
"""

from ..eventlog.checks import Divergence, VerifyReport
from .record import record_game
from .rerun import Engine, default_engine, verify, verify_records

__all__ = [
    "Divergence",
    "Engine",
    "VerifyReport",
    "default_engine",
    "record_game",
    "verify",
    "verify_records",
]
