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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Annotated, Any, NoReturn, ParamSpec, TypeVar

import typer
from rich.console import Console
from rich.text import Text

from gencoord import __version__
from gencoord.errors import BackendError, GencoordError, WorldError

app = typer.Typer(
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


def console(stderr: bool = False) -> Console:
    """A console that wraps at the terminal's width, and not at 80 columns when piped to a file."""
    stream = sys.stderr if stderr else sys.stdout
    if stream.isatty():
        return Console(stderr=stderr)
    return Console(stderr=stderr, soft_wrap=True, width=_PIPED_WIDTH)


def show_error(error: GencoordError | str) -> None:
    """``error`` on stderr, as plain text (never read as markup)."""
    console(stderr=True).print(Text(str(error), style="red"))


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

    return run


def command(app: typer.Typer = app, **settings: Any) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """``app.command`` for a guarded command (on the main app, or a command group's)."""

    def register(function: Callable[P, R]) -> Callable[P, R]:
        app.command(**settings)(guarded(function))
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
