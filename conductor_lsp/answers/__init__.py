"""What an answer is worth before any test: whether generation went round in a loop or past
the code it was asked for (``AnswerWatch``), and whether its Python code parses
(``code_problems``). Pure text in, reasons out; every engine and provider uses the same."""

from .check import code_problems
from .watch import AnswerWatch, TokenFlow

__all__ = ["AnswerWatch", "TokenFlow", "code_problems"]
