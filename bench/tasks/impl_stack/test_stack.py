import pytest

from stack import Stack


def test_stack():
    s = Stack()
    s.push(1)
    s.push(2)
    assert s.peek() == 2
    assert s.pop() == 2
    assert len(s) == 1
    assert s.pop() == 1
    assert s.peek() is None
    with pytest.raises(IndexError):
        s.pop()
