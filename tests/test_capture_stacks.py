"""Call stacks of recorded calls (capture.stacks): msprobe's lines for the frames running at the call, with
the C walk (_stacks.c) and the Python one."""

from __future__ import annotations

import linecache
import os
import sys
from functools import partial

import pytest
from capture_support import capture, make_model, restore_torch, train_step  # noqa: F401  (restore_torch: autouse)
from msprobe_runtime.pytorch.capture import stacks


@pytest.fixture(params=["compiled", "python"])
def walk(request, monkeypatch):
    """capture_stack as built (the C walk), and its Python walk; each starts with no frame remembered."""
    if request.param == "python":
        monkeypatch.setattr(stacks, "capture_stack", stacks.walk_stack)
    elif stacks._compiled is None:
        pytest.skip("the _stacks extension was not built (no C compiler)")
    stacks.release()
    yield stacks.capture_stack
    stacks.release()


def _expected(frame) -> tuple[str, ...]:
    """The lines of the frames from `frame` down, read from the frames themselves."""
    lines = []
    while frame is not None:
        code = frame.f_code
        source = linecache.getline(code.co_filename, frame.f_lineno).strip()
        lines.append(f"File {code.co_filename}, line {frame.f_lineno}, in {code.co_name}, \n {source}")
        frame = frame.f_back
    return tuple(lines)


def _number(walk) -> int:
    """The stack number at the caller's frame."""
    return walk(sys._getframe(1))


def _here(walk) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(captured lines, expected lines) at the caller's frame."""
    frame = sys._getframe(1)
    return stacks.stack_lines(walk(frame)), _expected(frame)


def test_lines_name_every_frame_running(walk):
    def inner():
        return _here(walk)

    def outer():
        return inner()

    captured, expected = outer()
    assert captured == expected
    assert captured[0].startswith(f"File {__file__}, line ") and ", in inner, \n return _here(walk)" in captured[0]


def test_calls_from_one_frame_differ_by_line_and_repeat_the_same(walk):
    """A loop calling API after API (the last frame's fast path): each call site its own stack, and the
    same site the same number."""
    numbers = []
    for _ in range(3):
        numbers.append(walk(sys._getframe()))
        numbers.append(walk(sys._getframe()))
    assert numbers[0] != numbers[1]
    assert numbers[::2] == [numbers[0]] * 3 and numbers[1::2] == [numbers[1]] * 3
    assert stacks.stack_lines(numbers[0])[1:] == stacks.stack_lines(numbers[1])[1:]


def test_sibling_calls_reuse_the_frames_below(walk):
    def call():
        return _here(walk)

    for _ in range(2):
        first, expected_first = call()
        second, expected_second = call()
        assert first == expected_first and second == expected_second
        assert first != second  # the caller's line differs


def test_a_generator_resumed_under_another_caller(walk):
    """Generator frames are never remembered: a resumed one is walked again, under its new caller."""

    def produce():
        while True:
            yield _here(walk)

    generator = produce()

    def first_caller():
        return next(generator)

    def second_caller():
        return next(generator)

    for caller in (first_caller, second_caller, first_caller):
        captured, expected = caller()
        assert captured == expected
        assert f"in {caller.__name__}," in captured[1]


def test_deep_stacks_and_returned_frames(walk):
    """Deep stacks are walked whole; frames of calls that returned are not kept (nor their locals)."""

    def recurse(depth: int):
        if depth == 0:
            return _here(walk)
        return recurse(depth - 1)

    for depth in (200, 3, 100):
        captured, expected = recurse(depth)
        assert captured == expected
    _here(walk)  # at this frame
    running = 0
    frame = sys._getframe()
    while frame is not None:
        running, frame = running + 1, frame.f_back
    assert len(stacks._last_stack) == running  # this frame and those below it: none of the recursion's


def test_own_frames_are_skipped_and_no_frame_is_minus_one(walk):
    """Frames of msprobe_runtime's own files (the hooks and wrappers) are not part of a stack."""
    namespace = {"sys": sys, "walk": walk}
    exec(compile("def hook():\n    return walk(sys._getframe())\n", os.path.join(stacks._OWN_DIR, "fake_hook.py"), "exec"),
         namespace)

    def user_code():
        return namespace["hook"](), _expected(sys._getframe())

    number, expected = user_code()
    assert stacks.stack_lines(number) == expected
    assert walk(None) == -1


def test_both_walks_number_stacks_alike():
    """The C walk and the Python walk share the caches: the same stack gets the same number from either."""
    if stacks._compiled is None:
        pytest.skip("the _stacks extension was not built (no C compiler)")

    def site(walk):  # as the hooks do: the frame of the user code calling them (its call to Python code)
        return _number(walk)

    numbers = []
    for walk in (stacks._compiled.capture, stacks.walk_stack, stacks._compiled.capture):
        stacks.release()  # forget the frames, keep the numbers
        numbers.append(site(walk))
    assert numbers == [numbers[0]] * 3
    with pytest.raises(TypeError):
        stacks._compiled.capture("not a frame")


def test_captures_write_the_same_stack_files_with_either_walk(tmp_path, monkeypatch):
    """The hooks and wrappers reach the walk through `stacks.capture_stack`: a mix capture (module calls,
    API calls, an optimizer's loop) writes the same stack.json with the C walk and the Python one."""
    if stacks._compiled is None:
        pytest.skip("the _stacks extension was not built (no C compiler)")
    walked = []

    def python_walk(frame):
        walked.append(frame)
        return stacks.walk_stack(frame)

    files = []
    for walk in (stacks._compiled.capture, python_walk):
        monkeypatch.setattr(stacks, "capture_stack", walk)
        model, optimizer, tokens = make_model()
        step = partial(train_step, model, optimizer, tokens)
        for _ in range(2):  # the second step: optimizer state made, as in the first run
            _, stack, _ = capture(tmp_path / walk.__name__, step, model, level="mix")
        files.append(stack)
    assert files[0] == files[1] and len(files[0]) > 10
    assert walked  # the Python walk took the stacks of the second run
