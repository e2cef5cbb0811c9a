"""The failing code is what a partly shown file shows, and the prompt says why
(``context.focus``): a traceback frame's line, the names a failing test calls, a
definition whose name is part of the failing test's name; the file's head last."""

from __future__ import annotations

from conductor_lsp.context.focus import CALLED, focus
from conductor_lsp.context.window import fit_task
from conductor_lsp.task import FileContext, Task

#: A module whose first 40 lines are a table (what a partial file always began with).
HEAD = (
    "import re\n\nPATTERNS = [\n"
    + "".join(f"    re.compile(r'p{i}'),\n" for i in range(40))
    + "]\n"
)


def module(extra: str) -> str:
    filler = "".join(f"\n\ndef helper_{i}(x):\n    return x * {i} + 1\n" for i in range(120))
    return HEAD + filler + extra + filler.replace("helper_", "other_")


INCREMENT = "\n\ndef _increment_string(s):\n    return s + 'INCREMENT_BODY'\n"
PARSE = "\n\ndef parse_version(s):\n    return tuple(s.split('.'))  # PARSE_BODY\n"


def shown(task: Task, path: str) -> FileContext:
    fitted = fit_task(task, 4000)
    return next(f for f in fitted.files if f.path == path)


def pointed(task: Task, path: str, name: str, why: str, marker: str) -> None:
    """``name`` is among what the failures point at, for ``why``, and ``path`` shows its
    body (``marker``) saying so."""
    assert (name, why) in focus(task).names
    f = shown(task, path)
    assert marker in f.text and f"{name} ({why})" in f.why


def failing_on(path: str, code: str, test_path: str, tests: str, failures: str) -> Task:
    """A task showing a module and the (read-only) test file that fails on it."""
    files = (FileContext(path, module(code)), FileContext(test_path, tests, editable=False))
    return Task("Fix it.", files, test_failures=failures)


def test_a_traceback_frame_brings_in_the_function_around_its_line() -> None:
    """The frame names a longer path than the task's (``src/pkg/version.py``)."""
    text = module(INCREMENT)
    line = text.splitlines().index("    return s + 'INCREMENT_BODY'") + 1
    failures = (
        "$ pytest\nFAILED (exit 1)\n- tests/test_v.py::test_bump at tests/test_v.py:3: E\n"
        f'  File "/src/pkg/version.py", line {line}, in _increment_string\n'
    )
    task = Task("Fix it.", (FileContext("pkg/version.py", text),), test_failures=failures)
    f = shown(task, "pkg/version.py")
    assert f.partial and "INCREMENT_BODY" in f.text
    assert f"_increment_string (in the traceback, line {line})" in f.why
    assert "p39" not in f.text  # the head came last, and did not fit
    assert "Shown: _increment_string (in the traceback" in Task("x", (f,)).render()


def test_a_definition_whose_name_is_part_of_the_failing_tests_name_is_shown() -> None:
    failures = (
        "$ pytest\nFAILED (exit 1)\n"
        "- tests/test_v.py::test_should_private_increment_string at tests/test_v.py:9: E\n"
    )
    task = Task("Fix it.", (FileContext("version.py", module(INCREMENT)),), test_failures=failures)
    f = shown(task, "version.py")
    assert "INCREMENT_BODY" in f.text
    assert "part of the failing test's name test_should_private_increment_string" in f.why


def test_what_the_failing_test_calls_is_shown() -> None:
    tests = (
        "from version import parse_version\n\n\ndef test_parse():\n"
        "    got = parse_version('1.2')\n    assert got == (1, 2)\n\n\n"
        "def test_fine():\n    assert helper_3(1) == 4\n"
    )
    failures = "$ pytest\nFAILED (exit 1)\n- test_v.py::test_parse at test_v.py:6: assert\n"
    task = failing_on("version.py", PARSE, "test_v.py", tests, failures)
    seen = focus(task)
    assert ("parse_version", CALLED) in seen.names and "helper_3" not in dict(seen.names)
    f = shown(task, "version.py")
    assert "PARSE_BODY" in f.text and f"parse_version ({CALLED})" in f.why


def test_with_nothing_pointed_at_the_head_is_what_is_shown() -> None:
    task = Task("Tidy up.", (FileContext("version.py", module("")),))
    f = shown(task, "version.py")
    assert f.partial and "p0" in f.text and f.why == "the file's head"


#: A factory that builds a wrapper, and the function that chose the factory: the
#: traceback runs through the wrapper; the bug is in the choice.
FACTORY = (
    "\n\ndef _locked(func, lock):\n    def wrapper(*args):\n"
    "        with lock:  # WRAPPER_BODY\n            return func(*args)\n    return wrapper\n"
    "\n\ndef _choose(func, lock=None):\n"
    "    if lock is None:  # CHOOSER_BODY\n        return _locked(func, lock)\n"
    "    return func\n"
)


def failing_at(text: str, marker: str, function: str) -> Task:
    """A task on ``w.py`` whose one failure's traceback names the line holding ``marker``."""
    line = text.splitlines().index(marker) + 1
    failures = (
        "$ pytest\nFAILED (exit 1)\n- test_w.py::test_w at test_w.py:3: TypeError\n"
        f'  File "w.py", line {line}, in {function}\n'
    )
    return Task("Fix it.", (FileContext("w.py", text),), test_failures=failures)


def test_the_function_that_calls_one_in_the_traceback_is_shown_too() -> None:
    task = failing_at(module(FACTORY), "        with lock:  # WRAPPER_BODY", "wrapper")
    f = shown(task, "w.py")
    assert "WRAPPER_BODY" in f.text and "CHOOSER_BODY" in f.text
    assert "_choose (calls _locked, in the traceback)" in f.why


def test_a_class_the_failing_test_defines_brings_in_set_name() -> None:
    """A descriptor is told its name when a class body holds it: no name the test
    writes reaches ``__set_name__``."""
    tests = (
        "from d import cached\n\n\ndef test_names():\n    class C:\n"
        "        @cached\n        def a(self):\n            return 1\n\n"
        "    assert C().a == 1\n"
    )
    failures = "$ pytest\nFAILED (exit 1)\n- test_d.py::test_names at test_d.py:9: assert\n"
    task = Task(
        "Fix it.", (FileContext("test_d.py", tests, editable=False),), test_failures=failures
    )
    assert ("__set_name__", CALLED) in focus(task).names


def test_what_iterates_in_a_failing_test_brings_in_iter() -> None:
    """``set(cache)``, ``sum(c)``: the builtins that iterate call ``__iter__``."""
    tests = "from c import Cache\n\n\ndef test_keys():\n    assert set(Cache()) == {1}\n"
    failures = "$ pytest\nFAILED (exit 1)\n- test_c.py::test_keys at test_c.py:5: assert\n"
    task = Task(
        "Fix it.", (FileContext("test_c.py", tests, editable=False),), test_failures=failures
    )
    assert ("__iter__", CALLED) in focus(task).names


def factories(n: int) -> str:
    """``n`` factories, each building its own ``wrapper`` and ``Descriptor``."""
    return "".join(
        f"\n\ndef _make_{i}(func):\n    class Descriptor:\n"
        f"        def get(self):\n            return {i}  # DESCRIPTOR_{i}\n\n"
        f"    def wrapper(*args):\n        return func(*args) + {i}  # WRAPPER_{i}\n"
        f"    return wrapper, Descriptor()\n"
        for i in range(n)
    )


def test_of_six_definitions_sharing_a_name_the_one_the_traceback_is_in_is_shown() -> None:
    """A failing test calls ``wrapper``; six factories define one: the one in the factory
    the traceback goes through is shown, not the six (a small window's share of the
    file); with no traceback through any, the first two."""
    text = module(factories(6))
    tests = "from w import make\n\n\ndef test_w():\n    assert make()(1) == 1\n    wrapper(1)\n"
    line = text.splitlines().index("        return func(*args) + 4  # WRAPPER_4") + 1
    head = "$ pytest\nFAILED (exit 1)\n- test_w.py::test_w at test_w.py:5: assert\n"
    for failures, want in (
        (head + f'  File "w.py", line {line}, in _make_4\n', {4}),
        (head, {0, 1}),
    ):
        task = Task(
            "Fix it.",
            (FileContext("w.py", text), FileContext("test_w.py", tests, editable=False)),
            test_failures=failures,
        )
        f = shown(task, "w.py")
        assert {i for i in range(6) if f"WRAPPER_{i}" in f.text} == want, f.text


def test_a_factory_building_its_own_class_of_that_name_is_not_a_caller() -> None:
    """The traceback goes through ``_make_3``'s ``Descriptor``; the other factories call a
    ``Descriptor`` of their own, and are not shown as its callers; the one that does call
    ``_make_3`` is."""
    text = module(
        factories(6) + "\n\ndef choose(func):\n    return _make_3(func)  # CHOOSER_BODY\n"
    )
    f = shown(failing_at(text, "            return 3  # DESCRIPTOR_3", "get"), "w.py")
    assert "CHOOSER_BODY" in f.text and "choose (calls _make_3, in the traceback)" in f.why
    assert "calls Descriptor" not in f.why and "calls wrapper" not in f.why


SIGNER = (
    "\n\ndef iter_unsigners(salt):\n    return [salt or 'default']  # UNSIGNERS_BODY\n"
    "\n\ndef unsign(signer, s):\n    raise ValueError(s)  # UNSIGN_BODY\n"
    "\n\ndef loads(s, salt=None):\n    signers = iter_unsigners(salt)\n"
    "    return unsign(signers[0], s)  # LOADS_FAILS\n"
)


def test_what_the_failing_function_called_before_failing_is_shown_too() -> None:
    """``loads`` fails in ``unsign`` on a signer ``iter_unsigners`` made wrong: no frame
    names ``iter_unsigners``, and the window is too small for the whole module."""
    text = module(SIGNER)
    lines = text.splitlines()
    at = lines.index("    return unsign(signers[0], s)  # LOADS_FAILS") + 1
    raised = lines.index("    raise ValueError(s)  # UNSIGN_BODY") + 1
    failures = (
        "$ pytest\nFAILED (exit 1)\n- test_s.py::test_salt at test_s.py:3: ValueError\n"
        f'  File "s.py", line {at}, in loads\n  File "s.py", line {raised}, in unsign\n'
    )
    task = Task("Fix it.", (FileContext("s.py", text),), test_failures=failures)
    f = shown(task, "s.py")
    assert "UNSIGNERS_BODY" in f.text and "LOADS_FAILS" in f.text and "UNSIGN_BODY" in f.text
    assert f"iter_unsigners (called by loads before line {at})" in f.why


PARSER = (
    "from lexer import tokenize\n\n\ndef parse(text):\n"
    "    tokens = list(tokenize(text))\n"
    "    return tokens[0]['value']  # PARSE_FAILS\n"
)
TOKENIZE = "\n\ndef tokenize(text):\n    yield {'kind': text}  # TOKENIZE_BODY\n"


def test_what_a_frame_called_before_failing_in_another_file_is_shown() -> None:
    """The parser fails on the tokens the lexer made: no frame is in the lexer, and no
    test calls ``tokenize``."""
    failures = (
        "$ pytest\nFAILED (exit 1)\n- test_p.py::test_value at test_p.py:3: KeyError\n"
        '  File "parser.py", line 6, in parse\nKeyError: value\n'
    )
    task = Task(
        "Fix it.",
        (FileContext("parser.py", PARSER), FileContext("lexer.py", module(TOKENIZE))),
        test_failures=failures,
    )
    assert ("tokenize", "called by parse before line 6") in focus(task).names
    f = shown(task, "lexer.py")
    assert "TOKENIZE_BODY" in f.text
    assert "tokenize (called by parse before line 6)" in f.why


VISITOR = (
    "\n\nclass Visitor:\n    def visit(self, node):\n"
    "        method = getattr(self, 'visit_%s' % node['type'])\n"
    "        return method(node)\n\n"
    "    def visit_not_expression(self, node):\n        return True  # NOT_BODY\n\n"
    "    def visit_field(self, node):\n        return node  # FIELD_BODY\n"
)


def parsed_as(tree: str, code: str) -> Task:
    """A visitor module (``code``) and a failing test that printed the parsed ``tree``."""
    failures = (
        "$ pytest\nFAILED (exit 1)\n- test_c.py::test_expression at test_c.py:9: assert\n"
        f"E   parsed as: {tree}\n"
    )
    return Task("Fix it.", (FileContext("visitor.py", module(code)),), test_failures=failures)


def test_a_method_looked_up_by_a_name_built_from_a_word_of_the_failures_is_shown() -> None:
    """``getattr(self, 'visit_%s' % node['type'])`` dispatches on a node's type: the
    failure prints the parsed tree, ``'type': 'not_expression'``, and no call names
    ``visit_not_expression``."""
    task = parsed_as("{'children': [], 'type': 'not_expression'}", VISITOR)
    looked_up = "looked up by name: 'visit_' + 'not_expression', a value in the failures"
    assert ("visit_not_expression", looked_up) in focus(task).names
    f = shown(task, "visitor.py")
    assert "NOT_BODY" in f.text and "FIELD_BODY" not in f.text
    assert f"visit_not_expression ({looked_up})" in f.why


GROUP = (
    "\n\ndef getter(key):\n    return lambda x: x[key + 1]  # GETTER_BODY\n\n\n"
    "def groupby(key, seq):\n    get = getter(key)\n    return [get(x) for x in seq]\n"
)


def test_what_a_function_the_failing_test_calls_calls_first_is_shown() -> None:
    """The test fails by assertion, so no frame is in the library: the wrong value is
    made by ``getter``, which ``groupby`` (what the test calls) calls."""
    tests = (
        "from lib import groupby\n\n\ndef test_groupby():\n    assert groupby(0, [[1]]) == [1]\n"
    )
    failures = "$ pytest\nFAILED (exit 1)\n- test_g.py::test_groupby at test_g.py:5: assert\n"
    task = failing_on("lib.py", GROUP, "test_g.py", tests, failures)
    why = "called by groupby, which the failing test calls"
    pointed(task, "lib.py", "getter", why, "GETTER_BODY")


EQUAL = (
    "\n\nclass Spec:\n    def __init__(self, lines):\n        self.lines = lines\n\n"
    "    def __eq__(self, other):\n        return self.lines != other.lines  # EQ_BODY\n"
)


def test_an_equality_the_failing_test_asserts_brings_in_eq() -> None:
    """``assertEqual(a, b)`` and ``a == b`` call ``__eq__``: a name the test never writes."""
    tests = (
        "import unittest\nfrom spec import Spec\n\n\nclass SpecTest(unittest.TestCase):\n"
        "    def test_eq(self):\n        self.assertEqual(Spec([1]), Spec([1]))\n"
    )
    failures = "$ pytest\nFAILED (exit 1)\n- test_s.py::SpecTest::test_eq at test_s.py:7: E\n"
    task = failing_on("spec.py", EQUAL, "test_s.py", tests, failures)
    assert ("__eq__", CALLED) in focus(task).names
    assert "EQ_BODY" in shown(task, "spec.py").text


LEXER = (
    "\n\ndef _consume_until(chars, delimiter):\n"
    "    '''Consume until the delimiter: a docstring, not a message at all.'''\n"
    "    if delimiter not in chars:  # UNTIL_BODY\n"
    "        raise ValueError('Unclosed %s delimiter' % delimiter)\n"
    "    return chars\n\n\n"
    "def _consume_number(chars):\n"
    "    if not chars:\n        raise ValueError(f'no digits in {chars!r}')  # NUMBER_BODY\n"
    "    return chars\n"
)


def test_the_function_holding_a_message_the_failures_print_is_shown() -> None:
    """The test catches the lexer's error and fails by assertion, printing its message:
    no frame is in the lexer, and no test calls ``_consume_until``. A message with
    less than ten fixed characters (``no digits in``) is too common to point."""
    failures = (
        "$ pytest\nFAILED (exit 1)\n- test_c.py::test_expression at test_c.py:9: "
        'AssertionError: failed to compile: foo."bar", error: Unclosed " delimiter: no digits in\n'
    )
    task = Task("Fix it.", (FileContext("lexer.py", module(LEXER)),), test_failures=failures)
    why = "makes the message 'Unclosed %s delimiter' the failures print"
    assert ("_consume_until", why) in focus(task).names
    assert all(n != "_consume_number" for n, _ in focus(task).names)
    f = shown(task, "lexer.py")
    assert "UNTIL_BODY" in f.text and "NUMBER_BODY" not in f.text
    assert f"_consume_until ({why})" in f.why


def test_a_message_the_failures_do_not_print_points_nowhere() -> None:
    failures = "$ pytest\nFAILED (exit 1)\n- test_c.py::test_x at test_c.py:9: Unclosed ' quote\n"
    task = Task("Fix it.", (FileContext("lexer.py", module(LEXER)),), test_failures=failures)
    assert not [n for n, why in focus(task).names if why.startswith("makes the message")]


ERRORS = (
    "\n\nclass ParseError(ValueError):\n    def __str__(self):\n"
    "        return 'Bad expression at %s' % self.position\n\n\n"
    "class IncompleteExpressionError(ParseError):\n    def __str__(self):\n"
    "        underline = ' ' * (self.position - 2) + '^'  # INCOMPLETE_BODY\n"
    "        return (\n            'Invalid expression: Incomplete expression:\\n'\n"
    "            '\"%s\"\\n%s' % (self.expression, underline))\n"
)


def test_a_message_of_several_lines_points_at_the_function_holding_it() -> None:
    """pytest prints an error's message of three lines with ``E`` before each: the
    message still points at the ``__str__`` that writes it."""
    failures = (
        "$ pytest\nFAILED (exit 1)\n- test_p.py::test_incomplete at test_p.py:9: Assert\n"
        "_____ test_incomplete _____\n"
        "E           IncompleteExpressionError: Invalid expression: Incomplete expression:\n"
        'E           "foo.{bar"\nE                     ^\n'
    )
    task = Task("Fix it.", (FileContext("errors.py", module(ERRORS)),), test_failures=failures)
    why = "makes the message 'Invalid expression: Incomplete expres...' the failures print"
    assert ("__str__", why) in focus(task).names
    assert "INCOMPLETE_BODY" in shown(task, "errors.py").text


COMPARE = VISITOR + (
    "\n    def visit_comparator(self, node):\n"
    "        return _is_comparable(node) and node['value']\n\n\n"
    "def _is_comparable(x):\n    return isinstance(x, str)  # COMPARABLE_BODY\n"
)


def test_what_a_method_looked_up_by_name_calls_is_shown() -> None:
    """``visit_comparator`` is reached by ``getattr``; the wrong answer is made in
    ``_is_comparable``, which it calls and which no test or frame names."""
    task = parsed_as("{'children': [], 'type': 'comparator', 'value': 'lt'}", COMPARE)
    why = "called by visit_comparator, looked up by name"
    pointed(task, "visitor.py", "_is_comparable", why, "COMPARABLE_BODY")


CHECKED = (
    "\n\nclass Sorted:\n    def _check(self):\n"
    + "".join(f"        assert self.lists[{i}] <= self.lists[{i + 1}]\n" for i in range(12))
    + "\n    def discard(self, value):\n        self.lists.remove(value)  # DISCARD_BODY\n"
)


def test_a_called_function_the_failing_tests_name_holds_comes_before_the_others() -> None:
    """``test_discard`` calls ``_check`` first and ``discard`` after: where only one
    fits, the one its name holds is shown."""
    tests = "def test_discard(s):\n    s._check()\n    s.discard(1)\n    assert s.lists == []\n"
    failures = "$ pytest\nFAILED (exit 1)\n- test_s.py::test_discard at test_s.py:8: assert\n"
    task = failing_on("s.py", CHECKED, "test_s.py", tests, failures)
    names = [n for n, _ in focus(task).names]
    assert names.index("_check") < names.index("discard")  # the test's own order
    f = next(f for f in fit_task(task, 1100).files if f.path == "s.py")
    assert "DISCARD_BODY" in f.text and "self.lists[11]" not in f.text


def chain(depth: int) -> str:
    """``step0`` calls ``step1`` ... calls ``stepN``, each twenty lines long."""
    out = ""
    for i in range(depth):
        body = "".join(f"    x = x + {k}  # STEP{i}_{k}\n" for k in range(18))
        call = f"step{i + 1}(x)" if i + 1 < depth else "x['boom']"
        out += f"\n\ndef step{i}(x):\n{body}    return {call}\n"
    return out


def test_of_a_deep_traceback_the_innermost_frame_is_shown_first() -> None:
    """Six frames in one module and room for two of them: the one that raised is shown,
    then the outermost."""
    code = module(chain(6))
    lines = code.splitlines()
    frames = [next(n for n, t in enumerate(lines, 1) if f"step{i}(x):" in t) + 19 for i in range(6)]
    failures = "$ pytest\nFAILED (exit 1)\n- test_p.py::test_p at test_p.py:3: TypeError\n"
    failures += "_____ test_p _____\n" + "".join(
        f"parser.py:{n}: in step{i}\n" for i, n in enumerate(frames)
    )
    task = Task("Fix it.", (FileContext("parser.py", code),), test_failures=failures)
    assert focus(task).points["parser.py"] == [frames[5], *frames[:5]]
    f = fit_task(task, 2600).files[0]
    assert "STEP5_17" in f.text and "STEP2_17" not in f.text
    assert f.why.startswith(f"step5 (in the traceback, line {frames[5]})")
