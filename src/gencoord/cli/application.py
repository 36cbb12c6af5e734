"""The ``gencoord`` application: one error boundary and one way to print for every command.

A person never sees a Python traceback for an ordinary mistake: every typed error becomes
a one-line message and a stable exit status (2: usage or configuration, 3: a backend or
world that cannot run). Text that came from outside (a model, a peer, a file) is printed
as text, never read as Rich markup.
"""

from __future__ import annotations

import functools
import os
import signal
import sys
import tempfile
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from enum import Enum
from pathlib import PurePath
from types import FrameType
from typing import Annotated, Any, NoReturn, ParamSpec, TypeVar, get_args

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.text import Text
from typer._click.core import Command
from typer._click.exceptions import BadParameter
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

from gencoord import __version__
from gencoord.errors import BackendError, GencoordError, WorldError, did_you_mean


def _choice_names(choices: Sequence[Any]) -> list[str]:
    return [str(choice.value if isinstance(choice, Enum) else choice) for choice in choices]


def _metavar(parameter: TyperArgument | TyperOption) -> str:
    """What a value is, as a person reads it: ``N``, ``PATH``, ``private|centralized``, ``TEXT``."""
    described = parameter.type_descriptor
    if described.choices is not None:
        return "|".join(_choice_names(described.choices))
    annotation = described.annotation
    element = get_args(annotation)[0] if described.is_list and get_args(annotation) else annotation
    if described.is_path or (isinstance(element, type) and issubclass(element, PurePath)):
        return "PATH"
    if element is int:
        return "N"
    if element is float:
        return "NUMBER"
    return "TEXT"


def _readable(parameters: list[Any]) -> None:
    """Flags take no value, so they show none (typer would print ``<bool>``); other values get a plain name,
    and an argument is named in capitals (``FILES...``) with what it takes beside it (``PATH``)."""
    for parameter in parameters:
        if isinstance(parameter, TyperOption) and parameter.is_bool_flag:
            parameter.metavar = ""
        elif isinstance(parameter, TyperOption) and parameter.metavar is None:
            parameter.metavar = _metavar(parameter)
        elif isinstance(parameter, TyperArgument) and parameter.metavar is None:
            kind = _metavar(parameter)
            parameter.metavar = (parameter.name or "value").upper() + ("..." if parameter.nargs != 1 else "")
            setattr(parameter, "display_type_rich", lambda ctx, kind=kind: kind)  # noqa: B010 - an instance's own


def _plain(error: BadParameter) -> str:
    """A value's refusal in our words: typer's comes through pydantic as "Value error, …", with no near miss."""
    cause = error.__cause__
    if not isinstance(cause, ValidationError) or not cause.errors():
        return error.message
    detail = cause.errors()[0]
    value = detail.get("input")
    param = error.param
    choices = param.type_descriptor.choices if isinstance(param, TyperArgument | TyperOption) else None
    if choices and isinstance(value, str):
        names = _choice_names(choices)
        return f"{value!r} is not one of {', '.join(names)}{did_you_mean(value, names)}"
    reason = detail.get("ctx", {}).get("error")
    return str(reason) if reason is not None else str(detail.get("msg", error.message))


def _quiet_flag(option: Any) -> Any:
    if option is not None:
        option.metavar = ""
    return option


def _help_to_a_closed_pipe(format_help: Callable[[], None]) -> None:
    """Help printed into a pipe its reader closed (``gencoord --help | head``) ends quietly: Rich exits 1 there,
    and printing help has no other way to exit."""
    try:
        format_help()
    except SystemExit as stop:
        if stop.code != 1:
            raise
        raise SystemExit(0) from None


class _Readable(Command):
    """What every command and group shares: plain value names, a help flag that shows none, quiet help into a
    closed pipe."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _readable(self.params)

    def get_help_option(self, ctx: Any) -> Any:
        return _quiet_flag(super().get_help_option(ctx))

    def format_help(self, ctx: Any, formatter: Any) -> None:
        _help_to_a_closed_pipe(functools.partial(super().format_help, ctx, formatter))


class ReadableCommand(_Readable, TyperCommand):
    """A command whose help reads as a person expects: ``Usage: gencoord tasks run [OPTIONS] FILES...``."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except BadParameter as error:
            raise BadParameter(_plain(error), ctx=error.ctx, param=error.param) from None

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for parameter in self.get_params(ctx):
            if isinstance(parameter, TyperArgument):
                name = str(parameter.metavar)
                pieces.append(name if parameter.required else f"[{name}]")
        return pieces


class ReadableGroup(_Readable, TyperGroup):
    """A command group whose own options (``--version``) show as a command's do."""


app = typer.Typer(
    cls=ReadableGroup,
    add_completion=False,
    no_args_is_help=True,
    help="Executable skill-path commitments (GenCoord).",
    context_settings={"help_option_names": ["-h", "--help"]},
    pretty_exceptions_enable=False,
)

USAGE = 2
"""Exit status of a usage, configuration or input-file error."""
UNAVAILABLE = 3
"""Exit status when a backend or a world cannot run at all."""
INTERNAL = 70
"""Exit status of a bug in gencoord (EX_SOFTWARE); the traceback goes to a file."""
INTERRUPTED = 130
"""Exit status after Ctrl-C or SIGTERM: the workers were stopped, finished work is kept."""

_PIPED_WIDTH = 160


def _stop_writing() -> None:
    """Point stdout at the null device, so the interpreter's last flush finds no closed pipe to complain about."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


class _Console(Console):
    """Rich's console, except that a reader closing the pipe (``gencoord demo | head``) ends the command quietly
    with status 0 (Rich's own ends it with 1, as if something had failed)."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        _stop_writing()
        raise SystemExit(0)


def console(stderr: bool = False) -> Console:
    """A console that wraps at the terminal's width, and not at 80 columns when piped to a file."""
    stream = sys.stderr if stderr else sys.stdout
    if stream.isatty():
        return _Console(stderr=stderr)
    return _Console(stderr=stderr, soft_wrap=True, width=_PIPED_WIDTH)


def show_error(error: GencoordError | str) -> None:
    """``error`` on stderr, as plain text (never read as markup), led by its own reason (``OTHER_RUN``), not
    only its category (``CONFIG_INVALID``)."""
    text = str(error)
    if isinstance(error, GencoordError) and error.reason != error.code:
        text = f"{error.reason} ({text.split(':', 1)[0]}):{text.split(':', 1)[1]}"
    console(stderr=True).print(Text(text, style="red"))


def fail(error: GencoordError | str, status: int = USAGE) -> NoReturn:
    """Show ``error`` and end the command with ``status``."""
    show_error(error)
    raise typer.Exit(status)


P = ParamSpec("P")
R = TypeVar("R")


def guarded(command: Callable[P, R]) -> Callable[P, R]:
    """Typed errors that escape a command become a message and an exit status."""

    @functools.wraps(command)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except (BackendError, WorldError) as error:
            fail(error, UNAVAILABLE)
        except GencoordError as error:
            fail(error, USAGE)
        except BrokenPipeError:  # `gencoord demo | head`: the reader has what it wanted
            _stop_writing()
            raise typer.Exit(0) from None

    return run


def command(app: typer.Typer = app, **settings: Any) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """``app.command`` for a guarded command (on the main app, or a command group's)."""

    def register(function: Callable[P, R]) -> Callable[P, R]:
        app.command(cls=ReadableCommand, **settings)(guarded(function))
        return function

    return register


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"gencoord {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_show_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Executable skill-path commitments (GenCoord)."""


def main() -> None:
    """The console entry point: the last boundary before a person would see a traceback."""
    try:
        app(prog_name="gencoord")
    except GencoordError as error:
        show_error(error)
        sys.exit(USAGE)
    except Exception as error:  # a bug: say so in one line, keep the traceback for the report
        with tempfile.NamedTemporaryFile("w", prefix="gencoord-crash-", suffix=".txt", delete=False) as handle:
            traceback.print_exc(file=handle)
        show_error(
            f"gencoord hit an internal error ({type(error).__name__}: {error}). This is a bug in gencoord, "
            f"not in your input; the traceback is in {handle.name}. Please report it with that file."
        )
        sys.exit(INTERNAL)


class Terminated(KeyboardInterrupt):
    """SIGTERM, delivered the way Ctrl-C is, so one path stops the workers and keeps the records."""


def _terminating(owner: int) -> Callable[[int, FrameType | None], None]:
    """The SIGTERM handler of process ``owner``; a forked worker inherits it before it can install its own, and
    there the signal keeps its default meaning (the worker ends quietly) instead of raising in a loop nobody
    catches."""

    def handler(signum: int, frame: FrameType | None) -> None:
        if os.getpid() == owner:
            raise Terminated
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)

    return handler


@contextmanager
def stoppable() -> Iterator[None]:
    """While the block runs, SIGTERM stops it as Ctrl-C does (worker pools end their processes)."""
    previous = signal.signal(signal.SIGTERM, _terminating(os.getpid()))
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
