"""The routing policy: what to try next for a task, and what it will cost, learned in
seconds from verdicts and bills.

``predict`` gives, per action, the chance of green and the $; ``fit`` learns it from
judged candidates; ``plans`` turns predictions into a round's plan; ``order`` decides
which of a round's candidates run first (likeliest per dollar); ``stop`` says when a lane
gives up; ``features`` is what it reads of a task and a worker; ``reading`` gives it a
conductor model's hidden state of a brief; ``online`` updates it after every fix job;
``offline`` fits one (and its stop rule) from recorded runs. ``planner`` is who plans what: the
conductor backend and the policy behind one ``Planner``, chosen once per session. The
entries other layers use are the names below: the session plans and learns through its
``Planner``, the fix loop orders with ``estimate``/``waves``,
``train --policy`` calls ``train_policy``, ``episodes --summary`` scores predictions
with ``examples_from``.
"""

from .features import Action, Hidden
from .fit import Example, examples_from, fit, scores, stamp
from .offline import FEATURES, eval_episodes, train_policy
from .online import learn_online
from .order import Option, chance_any, estimate, waves
from .planner import Planner, embedder, make_plan
from .plans import figures, round_plan, steer
from .predict import Policy
from .reading import read_briefs, read_with
from .stop import StopRule, Turn
from .waving import PREFER

__all__ = [
    "FEATURES",
    "PREFER",
    "Action",
    "Example",
    "Hidden",
    "Option",
    "Planner",
    "Policy",
    "StopRule",
    "Turn",
    "chance_any",
    "embedder",
    "estimate",
    "eval_episodes",
    "examples_from",
    "figures",
    "fit",
    "learn_online",
    "make_plan",
    "read_briefs",
    "read_with",
    "round_plan",
    "scores",
    "stamp",
    "steer",
    "train_policy",
    "waves",
]
