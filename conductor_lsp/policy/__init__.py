"""The routing policy: what to try next for a task, and what it will cost, learned in
seconds from verdicts and bills.

``model`` predicts (per action: the chance of green, the $), ``fit`` learns from judged
candidates, ``plans`` turns predictions into a round's plan, ``features`` is what it
reads of a task and a worker, ``reading`` gives it a conductor model's hidden state of a
brief, ``online`` updates it after every fix job, ``train`` fits one from recorded runs.
The entries other layers use are the names below: the session plans with
``round_plan``/``figures``/``steer`` and learns with ``learn_online``; ``train --policy``
calls ``train_policy``; ``episodes --summary`` scores predictions with ``examples_from``.
"""

from .features import Action, Hidden
from .fit import FEATURES, Example, eval_episodes, examples_from, fit, scores, stamp, train_policy
from .online import learn_online
from .plans import figures, round_plan, steer
from .predict import Policy
from .reading import read_briefs, read_with

__all__ = [
    "FEATURES",
    "Action",
    "Example",
    "Hidden",
    "Policy",
    "eval_episodes",
    "examples_from",
    "figures",
    "fit",
    "learn_online",
    "read_briefs",
    "read_with",
    "round_plan",
    "scores",
    "stamp",
    "steer",
    "train_policy",
]
