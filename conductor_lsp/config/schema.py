"""The configuration's shape: one dataclass per section, each field with its doc.

These are plain values; each field's type carries its bounds (``config.values``, checked
by pydantic as a layer is read); loading and layering live in ``configure.load``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field

from ..edits.model import EditsConfig
from .values import Chance, Count, Finite, NonNegative, Seconds, Size, Url

#: Most steps a plan may have, unless ``[conductor] max_steps`` says otherwise.
DEFAULT_MAX_STEPS = 5
#: The most steps a plan may be configured to have.
MAX_STEPS_LIMIT = 20


@dataclass
class EndpointConfig:
    """What the conductor and every worker share: a model behind an endpoint, with a price."""

    model: str = ""
    """Model name at the provider or server; a GGUF file or model directory when in process."""
    base_url: Url = ""
    """Endpoint URL (OpenAI style ends in /v1; Anthropic, Gemini: the host root)."""
    api_key_env: str = ""
    """Variable holding the key (default: the provider's usual one)."""
    api_key_cmd: str = ""
    """Command whose stdout is the key (wins over api_key_env)."""
    price_in: NonNegative = 0.0
    """Dollars per million input tokens."""
    price_out: NonNegative = 0.0
    """Dollars per million output tokens."""
    timeout: Seconds = 120.0
    """Seconds for one call (connect, and each read)."""
    max_retries: Size = 4
    """Retries on 429, 5xx and connection errors."""


@dataclass
class ConductorConfig(EndpointConfig):
    backend: str = "auto"
    """static, search, pipeline, transformers, llama-cpp, mlx, openai or auto (on `model` if
    set: llama-cpp when installed, else transformers; else static: the bundled SmolLM2-135M
    is too small to plan)."""
    worker: str = ""
    """static: always use this worker (the `single:NAME` strategy) instead of the strongest."""
    shape: Literal["solo", "architect", "review", "pipeline"] = "solo"
    """static: solo (one call); architect (`helper` describes the change in words, then
    the worker writes the edits seeing it: `architect:HELPER>WORKER`); review (`helper`
    writes a candidate and, when it is red, the worker corrects it seeing the failures,
    in the same round: `review:HELPER>WORKER`); pipeline (`helper` analyses, the worker
    writes the change seeing it, then reviews it: `pipeline:HELPER>WORKER`)."""
    helper: str = ""
    """static with shape architect, review or pipeline: the other worker (the one that
    goes first)."""
    wording: Literal["direct", "cause"] = "direct"
    """static, one call (shape solo): the first round's wording: direct (write the change)
    or cause (find the cause of the failing tests and name the lines to change, as
    search's second leaf asks; the `single:NAME@cause` strategy)."""
    max_steps: Annotated[int, Field(ge=1, le=MAX_STEPS_LIMIT)] = DEFAULT_MAX_STEPS
    """Most steps a plan may have."""
    temperature: NonNegative = 0.0
    """0 means greedy decoding."""
    policy: str = ""
    """A routing policy file (`train --policy`; relative to the workspace): with static or
    search it picks each round's leaves; a model conductor is shown its figures."""
    policy_steer: bool = False
    """With a model conductor and a policy: the policy's pick replaces each step's worker."""
    #: The backend's own keys (written in [conductor] like the others), checked against
    #: its class's ``Options`` once the backend is known.
    options: dict[str, Any] = field(default_factory=dict)


@dataclass
class WorkerConfig(EndpointConfig):
    provider: str = ""
    """openai, anthropic, gemini, openai-compatible, local, llama-cpp, tests or replay."""
    description: str = ""
    """One line the conductor sees about this worker."""
    strength: int = 0
    """How well it codes, relative to the others (higher is stronger); orders equal prices."""
    max_tokens: Count = 4096
    """Most tokens one answer may have."""
    context: Size = 0
    """Tokens the model's window holds, prompt and answer together (0: unknown, prompts
    sent whole). Files too big for it are shown in part: the lines the failures point at
    and the definitions the task names."""
    temperature: Finite = -1.0
    """Sampling temperature; negative leaves the provider's default."""
    concurrency: Count = 4
    """Most calls in flight to this worker's endpoint at once."""
    stream: bool = False
    """Stream the answer (SSE)."""
    #: The provider's own keys, checked against its class's ``Options``.
    options: dict[str, Any] = field(default_factory=dict)


@dataclass
class TestConfig:
    __test__ = False  # not a pytest class
    command: str = ""
    """Test command; default `python -m pytest -q` in a workspace that looks like a pytest one."""
    timeout: Seconds = 300.0
    """Seconds before the whole test process group is killed."""
    jobs: Count = 2
    """Most candidate answers tested at once, each in its own sandbox."""
    env: dict[str, str] = field(default_factory=dict)
    """Variables every test run gets. PYTHONHASHSEED is 0 unless set here (`"random"` for
    Python's default), so a suite that iterates a set fails in the same order every run."""
    walls: bool = True
    """Tests of code you did not write (candidates, mined repositories) run with no network
    but loopback and read-only outside their sandbox, where the machine allows it (Linux
    user namespaces; `doctor` says); false: without keys and with a HOME of their own only."""


@dataclass
class BudgetConfig:
    max_calls: Count = 30
    """Most worker calls for one job (a fix loop: for all iterations)."""
    max_cost: NonNegative = 2.0
    """Most dollars for one job."""
    max_seconds: Seconds = 900.0
    """Most wall-clock seconds for one job."""
    max_iterations: Count = 5
    """Most fix-and-test rounds."""


@dataclass
class FixConfig:
    allow_test_edits: bool = False
    """Let a fix job change the tests it is fixing (and their pytest configuration)."""
    floor: bool = True
    """Run static's own rounds (the floor lane) beside every other strategy's candidates,
    from their own start and told only of their own attempts."""
    repo_map_chars: Size = 6000
    """Analysis steps also see an outline of the workspace's Python files, nearest the
    failing tests first, cut to this many characters (0: no map)."""
    named_files: Size = 3
    """Workspace files a round's answers name but the round did not show (a module found
    through the map) that the next rounds show too, at most (0: none)."""
    prefer: Literal["balanced", "cost", "latency"] = "balanced"
    """In which order a round's candidates run: balanced (the likeliest per dollar first,
    then the floor's call, then the rest, each only if the ones before failed), cost
    (cheaper workers before the floor's call, one at a time) or latency (all at once)."""
    give_up_below: Chance = 0.05
    """With a fitted stop rule (`train --policy`), a lane beside the floor stops when its
    next round's chance of green is below this."""
    repair: bool = False
    """When an answer holds no edit that applies (prose, a fence with the file's path,
    SEARCH text not in the file), ask the cheapest worker, in the same round, to turn it
    into edits (it is shown the answer); off until measured to pay for itself."""
    give_up_floor: bool = False
    """Let the stop rule stop the floor lane too (static's own rounds), saving its calls on
    tasks nothing is likely to solve."""


@dataclass
class SearchConfig:
    workers: bool = True
    """Ask every model worker, not only the strongest (diversity of workers)."""
    wording: bool = True
    """Ask the strongest in a second wording too: find the cause first (diversity of wording)."""
    samples: Count = 1
    """Leaves the search backend asks of the strongest worker with the direct wording; the
    first is greedy, the others sample at `temperature` (1: no sampling)."""
    temperature: NonNegative = 0.8
    """Temperature of a leaf that repeats an earlier leaf (same worker, subtask and access)."""


@dataclass
class LearnConfig:
    record: bool = True
    """Append an episode per plan to the episodes file, for `episodes` and `train`."""
    episodes: str = ".conductor/episodes.jsonl"
    """Where episodes go, relative to the workspace root."""
    online: bool = False
    """Update `conductor.policy` after every fix job from its candidates' verdicts."""
    cost_weight: NonNegative = 10.0
    """Reward lost per dollar a plan spends (the conductor's own calls included)."""
    seconds_weight: NonNegative = 0.0
    """Reward lost per second a plan takes (0: time does not count)."""
    format_penalty: NonNegative = 0.2
    """Reward lost when the conductor's answer was not a valid plan."""


@dataclass
class TraceConfig:
    dir: str = ".conductor/traces"
    """Where JSONL traces go, relative to the workspace root."""
    enabled: bool = True
    """Write a trace per job."""


class PriceSource(StrEnum):
    """Where a worker's (or an endpoint conductor's) price came from."""

    WRITTEN = "written"  # a configuration layer set it: it wins over any lookup
    THIS_MACHINE = "this machine"
    LOCAL_SERVER = "local server"
    LOOKED_UP = "looked up"  # genai-prices' bundled snapshot
    PROVIDER_DEFAULT = "provider default"
    PLUGIN = "plugin"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class PriceOrigin:
    source: PriceSource
    #: The layer, the server's URL, what genai-prices matched, or the provider's name.
    detail: str = ""

    def text(self) -> str:
        """The origin in words, for ``doctor`` and ``init``."""
        s, d = self.source, self.detail
        return {
            PriceSource.WRITTEN: f"set in {d}",
            PriceSource.THIS_MACHINE: "on this machine: free",
            PriceSource.LOCAL_SERVER: f"a local server ({d}): free",
            PriceSource.LOOKED_UP: d,
            PriceSource.PROVIDER_DEFAULT: f"{d}'s default for its default model "
            "(genai-prices does not know it)",
            PriceSource.PLUGIN: "as the provider plugin or the configuration sets it",
            PriceSource.UNKNOWN: "unknown: counted as $0 (genai-prices does not know the "
            "model; set price_in, price_out)",
        }[s]


@dataclass
class Config:
    conductor: ConductorConfig = field(default_factory=ConductorConfig)
    workers: dict[str, WorkerConfig] = field(default_factory=dict)
    test: TestConfig = field(default_factory=TestConfig)
    budget: BudgetConfig = field(default_factory=BudgetConfig)
    fix: FixConfig = field(default_factory=FixConfig)
    search: SearchConfig = field(default_factory=SearchConfig)
    learn: LearnConfig = field(default_factory=LearnConfig)
    trace: TraceConfig = field(default_factory=TraceConfig)
    edits: EditsConfig = field(default_factory=EditsConfig)
    root: Path = field(default_factory=Path.cwd)
    #: Where each part came from, for ``doctor``.
    sources: list[str] = field(default_factory=list)
    #: Where each worker's price (and an endpoint conductor's, as "conductor") came from.
    prices: dict[str, PriceOrigin] = field(default_factory=dict)
    #: Commands a workspace file set that did not run: the workspace is not trusted.
    untrusted: list[str] = field(default_factory=list)

    def key_names(self) -> frozenset[str]:
        """The variables this configuration names as keys (``api_key_env``): tests of code
        we did not write never see them."""
        ends = [self.conductor, *self.workers.values()]
        return frozenset(e.api_key_env for e in ends if e.api_key_env)


#: The TOML sections besides ``[workers.NAME]``, in the order ``docs/configuration.md`` lists them.
SECTIONS: dict[str, type] = {
    "conductor": ConductorConfig,
    "test": TestConfig,
    "budget": BudgetConfig,
    "fix": FixConfig,
    "search": SearchConfig,
    "learn": LearnConfig,
    "trace": TraceConfig,
    "edits": EditsConfig,
}

__all__ = [
    "SECTIONS",
    "BudgetConfig",
    "ConductorConfig",
    "Config",
    "EditsConfig",
    "EndpointConfig",
    "FixConfig",
    "LearnConfig",
    "PriceOrigin",
    "PriceSource",
    "SearchConfig",
    "TestConfig",
    "TraceConfig",
    "WorkerConfig",
]
