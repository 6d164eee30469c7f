"""tess_status as Python exceptions, each carrying tess_last_error()'s sentence."""
import enum

from . import _lib


class Status(enum.IntEnum):
    """tess_status values."""
    SUCCESS = 0
    NOT_INITIALIZED = 1
    ALLOC_FAILED = 3
    INVALID_VALUE = 7
    ARCH_MISMATCH = 8
    EXECUTION_FAILED = 13
    INTERNAL_ERROR = 14
    NOT_SUPPORTED = 15
    INSUFFICIENT_WORKSPACE = 100
    NO_DEVICE = 101


class TesseraError(ValueError):
    """A tessera call failed. `status` is the Status, `str(e)` the sentence naming what was wrong."""

    status = None

    def __init__(self, message, status=None):
        super().__init__(message)
        if status is not None:
            self.status = status


class NotInitializedError(TesseraError):
    status = Status.NOT_INITIALIZED


class AllocFailedError(TesseraError, MemoryError):
    status = Status.ALLOC_FAILED


class InvalidValueError(TesseraError):
    status = Status.INVALID_VALUE


class ArchMismatchError(TesseraError, RuntimeError):
    status = Status.ARCH_MISMATCH


class ExecutionFailedError(TesseraError, RuntimeError):
    status = Status.EXECUTION_FAILED


class InternalError(TesseraError, RuntimeError):
    status = Status.INTERNAL_ERROR


class NotSupportedError(TesseraError):
    status = Status.NOT_SUPPORTED


class InsufficientWorkspaceError(TesseraError):
    status = Status.INSUFFICIENT_WORKSPACE


class NoDeviceError(TesseraError, RuntimeError):
    status = Status.NO_DEVICE


_BY_STATUS = {cls.status: cls for cls in (
    NotInitializedError, AllocFailedError, InvalidValueError, ArchMismatchError, ExecutionFailedError,
    InternalError, NotSupportedError, InsufficientWorkspaceError, NoDeviceError)}


def status_name(status):
    """'TESS_STATUS_INVALID_VALUE' for 7."""
    return _lib.lib().tess_status_name(int(status)).decode()


def check(status):
    """Raises the exception for a failed tess_status, with the C library's sentence."""
    if status == Status.SUCCESS:
        return
    message = _lib.lib().tess_last_error().decode(errors="replace")
    try:
        st = Status(status)
    except ValueError:
        raise TesseraError(f"unknown status {status}: {message}", status)
    raise _BY_STATUS.get(st, TesseraError)(message, st)
