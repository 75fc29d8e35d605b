"""A failed run's ``error.log``: the traceback, masked, in the run folder; the run's
one line (meta.json's ``error``) says what went wrong and points there."""
from __future__ import annotations

from pathlib import Path

from ..masking import mask_text
from .folders import write_text


ERROR_LOG = "error.log"


def log_exception(run_dir: Path, e: BaseException) -> str:
    """The exception's traceback into the run folder (masked); its one line returned."""
    import traceback
    write_error_log(run_dir, "".join(traceback.format_exception(type(e), e, e.__traceback__)))
    first = str(e).strip().splitlines()
    return mask_text(f"{type(e).__name__}: {first[0]}" if first else type(e).__name__)


def write_error_log(run_dir: Path, text: str) -> None:
    try:
        write_text(run_dir / ERROR_LOG, mask_text(text))
    except OSError:
        pass   # a full disk: the reason is in meta.json, written from the reserve
