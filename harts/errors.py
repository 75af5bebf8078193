"""Errors that end a command with one line: where the bad input is and what was expected."""


class InputError(Exception):
    """Bad user input (config, microprogram, command-line value), reported as FILE:LINE: message."""

    def __init__(self, message: str, path: str | None = None, line: int | None = None):
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line

    def __str__(self) -> str:
        where = ""
        if self.path is not None:
            where = f"{self.path}:{self.line}: " if self.line is not None else f"{self.path}: "
        return where + self.message


class SimulationError(Exception):
    """The engine detected a broken invariant or a microprogram that misbehaved at run time."""
