"""The Short DSL scanner (paper S4.1).

Hand-written on purpose: the grammar is two lines, and a scanner gives errors with the
exact line, column, task and key, keeps decoding atomic for JSON strings, and is fast
enough to sit on every message (tens of microseconds). It never executes anything and
never raises anything but :class:`ParseError` for any input.
"""

from __future__ import annotations

import json
import re

from gencoord.dsl.ast import Path, PeerRequest, Proposal, Task, Value
from gencoord.dsl.fast_parse import NUMBER, RESERVED, number, parse_fast
from gencoord.dsl.vocabulary import Vocabulary, default_vocabulary
from gencoord.errors import Location, ParseError, WireError, did_you_mean
from gencoord.reasons import Reason

WIRE_CAP_BYTES = 4096
"""Largest message accepted, in UTF-8 bytes; larger input is rejected before parsing."""


_SPACE = re.compile(r"[ \t]*")
_SKILL = re.compile(r"[A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z][A-Za-z0-9_]*)*")
_KEY = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BARE = re.compile(r'[^\s,()"=>]+')
ATOM = re.compile(r"[A-Za-z0-9_.:/+-]+")


def check_size(message: str | bytes) -> str:
    """Enforce the wire cap and decode bytes; the first check on anything that arrives."""
    if isinstance(message, bytes | bytearray):
        if len(message) > WIRE_CAP_BYTES:
            raise WireError(
                Reason.MESSAGE_TOO_LARGE,
                f"message is {len(message)} bytes; the wire cap is {WIRE_CAP_BYTES} bytes",
            )
        try:
            return bytes(message).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise WireError(Reason.INVALID_UTF8, f"message is not valid UTF-8 (byte {exc.start})") from None
    # A character is at most 4 UTF-8 bytes, so only long strings need the exact count.
    if len(message) * 4 > WIRE_CAP_BYTES:
        size = len(message.encode("utf-8", "surrogatepass"))
        if size > WIRE_CAP_BYTES:
            raise WireError(
                Reason.MESSAGE_TOO_LARGE, f"message is {size} bytes; the wire cap is {WIRE_CAP_BYTES} bytes"
            )
    return message


class _Line:
    """Scanning state for one line; raises located errors."""

    __slots__ = ("number", "pos", "section", "skill", "task_index", "text", "vocab")

    def __init__(self, text: str, number: int, section: str, vocab: Vocabulary) -> None:
        self.text = text
        self.number = number
        self.section = section
        self.vocab = vocab
        self.pos = 0
        self.task_index: int | None = None
        self.skill: str | None = None

    def fail(self, reason: Reason, message: str, *, at: int | None = None, key: str | None = None) -> ParseError:
        column = (self.pos if at is None else at) + 1
        return ParseError(
            reason,
            message,
            Location(self.number, column, self.section, self.task_index, self.skill, key),
        )

    def skip_space(self) -> None:
        match = _SPACE.match(self.text, self.pos)
        assert match is not None  # the pattern matches the empty string
        self.pos = match.end()

    def at_end(self) -> bool:
        return self.pos >= len(self.text)

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def describe_here(self) -> str:
        char = self.peek()
        return "end of line" if not char else repr(char)

    def keyword(self, word: str, missing: Reason) -> None:
        self.skip_space()
        if not self.text.startswith(word, self.pos):
            found = self.text[self.pos : self.pos + len(word) + 8] or "an empty line"
            raise self.fail(missing, f"line {self.number} must start with {word!r}, found {found!r}")
        self.pos += len(word)
        if self.peek() not in (" ", "\t"):
            raise self.fail(Reason.EXPECTED_SPACE, f"expected a space after {word!r}, found {self.describe_here()}")
        self.skip_space()

    def dash_only(self) -> bool:
        """``-`` standing alone: an empty self path or an absent request."""
        if self.peek() != "-":
            return False
        rest = self.text[self.pos + 1 :]
        if not rest.strip(" \t"):
            self.pos = len(self.text)
            return True
        if rest[0] in " \t":
            raise self.fail(Reason.TRAILING_TEXT, f"'-' must stand alone on the {self.section} line", at=self.pos + 2)
        return False

    def end(self) -> None:
        self.skip_space()
        if not self.at_end():
            raise self.fail(
                Reason.TRAILING_TEXT, f"unexpected text after the path: {self.text[self.pos : self.pos + 24]!r}"
            )

    def path(self) -> Path:
        tasks: list[Task] = []
        while True:
            cap = self.vocab.max_path_tasks
            if len(tasks) == cap:
                raise self.fail(Reason.TOO_MANY_TASKS, f"a path holds at most {cap} tasks; this one has more")
            self.task_index = len(tasks) + 1
            tasks.append(self.task())
            self.skill = None
            self.skip_space()
            if self.peek() != ">":
                return tuple(tasks)
            self.pos += 1
            self.skip_space()

    def task(self) -> Task:
        match = _SKILL.match(self.text, self.pos)
        if match is None:
            raise self.fail(
                Reason.EXPECTED_SKILL, f"expected a skill such as resource.obtain(...), found {self.describe_here()}"
            )
        skill = match.group()
        if skill not in self.vocab.skills:
            raise self.fail(
                Reason.UNKNOWN_SKILL,
                f"unknown skill {skill!r}{did_you_mean(skill, self.vocab.skills)}",
            )
        self.skill = skill
        self.pos = match.end()
        self.skip_space()
        if self.peek() != "(":
            raise self.fail(Reason.EXPECTED_OPEN_PAREN, f"expected '(' after {skill!r}, found {self.describe_here()}")
        self.pos += 1
        self.skip_space()
        args: dict[str, Value] = {}
        if self.peek() == ")":
            self.pos += 1
            return Task(skill, ())
        while True:
            key_start = self.pos
            key_match = _KEY.match(self.text, self.pos)
            if key_match is None:
                raise self.fail(Reason.EXPECTED_KEY, f"expected an argument name, found {self.describe_here()}")
            spelled = key_match.group()
            key = self.vocab.aliases.get(spelled, spelled)
            self.pos = key_match.end()
            self.skip_space()
            if self.peek() != "=":
                raise self.fail(
                    Reason.EXPECTED_EQUALS, f"expected '=' after {spelled!r}, found {self.describe_here()}", key=key
                )
            self.pos += 1
            self.skip_space()
            value = self.value(key)
            if key in args:
                folded = "" if spelled == key else f" ({spelled!r} is an alias of {key!r})"
                raise self.fail(Reason.DUPLICATE_KEY, f"duplicate argument {key!r}{folded}", at=key_start, key=key)
            args[key] = value
            self.skip_space()
            char = self.peek()
            if char == ")":
                self.pos += 1
                return Task(skill, self.vocab.canonical_args(skill, args))
            if char != ",":
                reason = Reason.UNTERMINATED_TASK if not char else Reason.EXPECTED_COMMA
                raise self.fail(
                    reason, f"expected ',' or ')' after argument {key!r}, found {self.describe_here()}", key=key
                )
            self.pos += 1
            self.skip_space()

    def value(self, key: str) -> Value:
        char = self.peek()
        if char == '"':
            match = _STRING.match(self.text, self.pos)
            if match is None:
                raise self.fail(Reason.UNTERMINATED_STRING, f"string value of {key!r} has no closing quote", key=key)
            try:
                decoded = json.loads(match.group())
            except json.JSONDecodeError as exc:
                raise self.fail(Reason.INVALID_STRING, f"invalid JSON string for {key!r}: {exc.msg}", key=key) from None
            self.pos = match.end()
            return str(decoded)
        match = _BARE.match(self.text, self.pos)
        if match is None:
            raise self.fail(Reason.MISSING_VALUE, f"argument {key!r} has no value", key=key)
        token = match.group()
        start = self.pos
        self.pos = match.end()
        if token[0] in "-0123456789" and NUMBER.fullmatch(token):
            try:
                return number(token)
            except ValueError:
                raise self.fail(
                    Reason.NUMBER_OUT_OF_RANGE, f"number {token[:20]!r} is out of range", at=start, key=key
                ) from None
        if token in RESERVED:
            return RESERVED[token]
        if ATOM.fullmatch(token) is None:
            bad = next(c for c in token if not ATOM.fullmatch(c))
            raise self.fail(
                Reason.INVALID_ATOM,
                f"{token!r} is not a valid unquoted value (character {bad!r}); quote it as a JSON string",
                at=start,
                key=key,
            )
        return token


def parse(message: str | bytes, vocab: Vocabulary | None = None) -> Proposal:
    """Parse one SELF+REQ message; raise :class:`ParseError` with its location otherwise.

    ``vocab`` defaults to the packaged prior's (:func:`default_vocabulary`).

    Tolerated non-canonical forms: spaces or tabs around tokens, one trailing LF, CRLF
    line ends. Everything else that is not the S4.1 grammar is rejected.
    """
    vocab = vocab or default_vocabulary()
    lines = split_lines(check_size(message))
    if len(lines) == 2:
        fast = parse_fast(lines[0], lines[1], vocab)
        if fast is not None:
            return fast
    return parse_scanned(lines, vocab)


def split_lines(text: str) -> list[str]:
    """CRLF line ends and one trailing line end are tolerated; the rest is the grammar's business.

    A NUL byte is refused here, by name: it is never part of a message, and shown as it is
    it would be invisible in the error.
    """
    if "\x00" in text:
        before = text[: text.index("\x00")]
        line = before.count("\n") + 1
        column = len(before) - (before.rfind("\n") + 1) + 1
        raise ParseError(
            Reason.NUL_BYTE,
            "the message holds a NUL byte (\\x00); a message is text, with no control bytes",
            Location(line=line, column=column),
        )
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    if text.endswith("\n"):
        text = text[:-1]
    return text.split("\n")


def parse_scanned(lines: list[str], vocab: Vocabulary) -> Proposal:
    """The scanner on already split lines: tolerant of spacing, precise in its errors.

    Two lines are the paper's grammar. More are gencoord's n-party extension: one
    ``REQ <agent> <path>`` line per distinct peer (any order; the object keeps them sorted
    by agent, as the canonical serializer writes them). ``REQ -`` stands alone.
    """
    if len(lines) < 2:
        raise ParseError(
            Reason.MISSING_REQ_LINE, "expected two lines, SELF then REQ; the REQ line is missing", Location(line=2)
        )
    head = _Line(lines[0], 1, "SELF", vocab)
    head.keyword("SELF", Reason.EXPECTED_SELF)
    self_plan: Path = ()
    if not head.dash_only():
        self_plan = head.path()
        head.end()
    requests: dict[str, PeerRequest] = {}
    for line_number, text in enumerate(lines[1:], start=2):
        if line_number > 2 and not requests:
            raise ParseError(
                Reason.EXTRA_LINE,
                f"'REQ -' stands alone; found {len(lines)} lines",
                Location(line=line_number, column=1),
            )
        if line_number > 2 and not text.lstrip(" \t").startswith("REQ"):
            raise ParseError(
                Reason.EXTRA_LINE,
                f"expected another REQ line or the end of the message, found {len(lines)} lines",
                Location(line=line_number, column=1),
            )
        request = _request_line(_Line(text, line_number, "REQ", vocab), alone=line_number == 2 and len(lines) == 2)
        if request is None:
            if line_number > 2:
                raise ParseError(
                    Reason.REQ_DASH_NOT_ALONE, "'REQ -' cannot follow a request", Location(line=line_number)
                )
            continue
        if request.target in requests:
            raise ParseError(
                Reason.DUPLICATE_PEER,
                f"two REQ lines address {request.target!r}; one line per peer",
                Location(line=line_number, section="REQ"),
            )
        requests[request.target] = request
    return Proposal(self_plan, tuple(requests[target] for target in sorted(requests)))


def _request_line(tail: _Line, alone: bool) -> PeerRequest | None:
    """One REQ line: its request, or None for ``REQ -``."""
    tail.keyword("REQ", Reason.EXPECTED_REQ)
    if tail.dash_only():
        return None
    agent = ATOM.match(tail.text, tail.pos)
    if agent is None:
        raise tail.fail(
            Reason.EXPECTED_AGENT, f"expected the requested agent's id after 'REQ', found {tail.describe_here()}"
        )
    target = agent.group()
    tail.pos = agent.end()
    if tail.at_end():
        raise tail.fail(Reason.EMPTY_REQUEST, f"the request to {target!r} has no requested plan")
    if tail.peek() not in (" ", "\t"):
        raise tail.fail(Reason.EXPECTED_SPACE, f"expected a space after the agent id, found {tail.describe_here()}")
    tail.skip_space()
    if tail.at_end():
        raise tail.fail(Reason.EMPTY_REQUEST, f"the request to {target!r} has no requested plan")
    plan = tail.path()
    tail.end()
    return PeerRequest(target, plan)
