"""How tests of code we did not write are run: a candidate's (in its sandbox), a mined
repository's, a rollout's. Their environment holds no key (no variable whose name says
it is one, none the configuration names, none whose value is a key in use), and HOME
and the temp dir are a private folder made for the run and removed after it.

Where the machine allows it (``testrun.walls``: Linux user namespaces) the run also has
no network but loopback and may write only in its sandbox and private folder; where it
does not, the network and the files outside the sandbox are open to the tests with the
user's rights (``doctor`` says which). The workspace's own first test run of ``fix`` is
the user's command on the user's files: it is not confined.
"""

from __future__ import annotations

import re
import site
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

#: A variable whose name says it holds a secret.
SECRET_NAME = re.compile(
    r"(?:^|_)(?:API_?KEY|ACCESS_?KEY|SECRET|TOKEN|PASSWORD|PASSWD|CREDENTIALS?)(?:_|$)", re.I
)
#: Provider variables removed whatever their names say.
KNOWN_KEYS = frozenset(
    {
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "AZURE_OPENAI_API_KEY",
        "MISTRAL_API_KEY",
        "GROQ_API_KEY",
        "TOGETHER_API_KEY",
        "OPENROUTER_API_KEY",
        "DEEPSEEK_API_KEY",
        "HF_TOKEN",
        "HUGGING_FACE_HUB_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
    }
)
#: Who commits, for tests that run git with no ~/.gitconfig to read.
GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "conductor-lsp tests",
    "GIT_COMMITTER_NAME": "conductor-lsp tests",
    "GIT_AUTHOR_EMAIL": "tests@conductor-lsp.invalid",
    "GIT_COMMITTER_EMAIL": "tests@conductor-lsp.invalid",
}
#: The private folder's variables (home, temp, caches, configuration) and their folders.
PRIVATE = {
    "HOME": "",
    "TMPDIR": "tmp",
    "TMP": "tmp",
    "TEMP": "tmp",
    "XDG_CACHE_HOME": ".cache",
    "XDG_CONFIG_HOME": ".config",
    "XDG_DATA_HOME": ".local",
}


@dataclass(frozen=True)
class Confinement:
    #: Variables the configuration names as keys (``api_key_env``).
    names: frozenset[str] = frozenset()
    #: The keys in use, by value: a variable holding one goes whatever its name.
    values: frozenset[str] = field(default=frozenset(), repr=False)
    #: Wall the run in too (no network, read-only outside its sandbox) where the machine
    #: allows it (``[test] walls``).
    walls: bool = True

    def secret(self, name: str, value: str) -> bool:
        return (
            name in KNOWN_KEYS
            or name in self.names
            or bool(SECRET_NAME.search(name))
            or (len(value) >= 8 and value in self.values)
        )

    def environ(self, base: Mapping[str, str], home: Path) -> dict[str, str]:
        """``base`` without its keys, with HOME, the temp dir and the XDG folders in
        ``home`` (created here)."""
        env = {k: v for k, v in base.items() if not self.secret(k, v)}
        # Packages installed with ``pip install --user`` stay importable, and git has an
        # identity (the user's ~/.gitconfig is not read from the private HOME).
        env.setdefault("PYTHONUSERBASE", site.getuserbase())
        env.update({k: v for k, v in GIT_IDENTITY.items() if k not in base})
        for name, sub in PRIVATE.items():
            folder = home / sub if sub else home
            folder.mkdir(parents=True, exist_ok=True)
            env[name] = str(folder)
        return env

    def removed(self, base: Mapping[str, str]) -> list[str]:
        """The names of the variables a confined run does not get (for ``doctor``)."""
        return sorted(k for k, v in base.items() if self.secret(k, v))
