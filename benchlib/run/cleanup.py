"""A cleanup never masks the error that made it run.

In a ``finally:`` the exception in flight is replaced by any the cleanup raises: a
key counter's segment already unlinked (``FileNotFoundError: '/psm_…'``) stood in for
"the Dask scheduler is gone". :func:`tidy` runs a cleanup; while an exception is in
flight, the cleanup's own failure is dropped (the original is what the user reads),
otherwise it raises as usual.
"""
from __future__ import annotations

import sys
from collections.abc import Callable


def tidy(fn: Callable[..., object], *args, **kwargs) -> None:
    """``fn(*args, **kwargs)``, its exception dropped when another is being raised."""
    if sys.exc_info()[1] is None:
        fn(*args, **kwargs)
        return
    try:
        fn(*args, **kwargs)
    except Exception:  # noqa: BLE001 - the exception in flight is the one to tell
        pass
