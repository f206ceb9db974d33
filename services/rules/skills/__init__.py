"""General skills by their standard names (one module per faction); importing registers them.

Rulesets that print a skill under another name (seed 000: 好色 for 奸雄) register aliases with
:func:`.base.alias`; the logic exists once, here.
"""

from . import qun, shu, standard_more, wei, wu  # noqa: F401
