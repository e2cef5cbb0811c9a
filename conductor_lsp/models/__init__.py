"""In-process models, shared by the conductor and the workers that name the same file.

``base`` holds what every engine shares (``Generation``, a load-once cache, decoding in a
thread a cancelled job stops); ``transformers`` and ``llama`` are the engines (mlx-lm
lives with its conductor backend); ``weights`` caches de-quantized GGUFs; ``stats`` says
what loaded and how fast it decoded; ``hidden`` is what a routing policy reads of a brief.
Heavy packages (torch, llama-cpp-python) are imported only when a model loads. The
``transformers`` engine is what the ``transformers`` conductor backend plans with.
"""
