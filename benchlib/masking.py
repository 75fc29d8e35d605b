"""Secrets never reach a file or a printed line: URLs, mappings and text are masked here.

What counts as a secret: the password of a URL's user-info (also with a raw ``@`` in
it, or percent-encoded), a URL query value whose name says password/secret/token
(libpq's ``?password=``, ``sslpassword``, a Redis URL's ``?password=``), and the value
of any property, parameter or environment variable whose name holds ``password``,
``passwd``, ``pwd``, ``secret`` or ``token``.
"""
from __future__ import annotations

import re
from typing import Any

MASK = "***"
SECRET_NAME = re.compile(r"pass(word|wd)?|pwd|secret|token|credential", re.IGNORECASE)
_QUERY_SECRET = re.compile(r"([?&;](?:[^=&#;]*(?:pass(?:word|wd)?|pwd|secret|token)[^=&#;]*)=)([^&#;]*)",
                           re.IGNORECASE)


def is_secret_name(name: str) -> bool:
    return bool(SECRET_NAME.search(str(name)))


def mask_url(url: str) -> str:
    """The URL with its password (user-info and query) replaced by ``***``."""
    if not isinstance(url, str) or "://" not in url:
        return url
    scheme, rest = url.split("://", 1)
    # the authority ends at the path, query or fragment after the last "@" of the
    # user-info: a raw "@" inside a password belongs to the password, not the host
    head = re.split(r"[?#]", rest, maxsplit=1)[0]
    at = head.rfind("@")
    if at >= 0:
        userinfo, tail = rest[:at], rest[at:]
        if ":" in userinfo:
            user = userinfo.split(":", 1)[0]
            rest = f"{user}:{MASK}{tail}"
    rest = _QUERY_SECRET.sub(lambda m: m.group(1) + MASK, rest)
    return f"{scheme}://{rest}"


def mask_mapping(obj: Any) -> Any:
    """A copy of a nested dict/list with every secret masked (by key name, and every
    string that holds a URL)."""
    if isinstance(obj, dict):
        return {k: (MASK if is_secret_name(k) and isinstance(v, (str, int, float)) and v not in ("", None)
                    else mask_mapping(v)) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(mask_mapping(v) for v in obj)
    if isinstance(obj, str):
        return mask_text(obj)
    return obj


_URL_IN_TEXT = re.compile(r"[a-z][a-z0-9+.\-]*://[^\s'\"<>]+", re.IGNORECASE)


def mask_text(text: str) -> str:
    """Every URL inside a line of text masked (error messages quote URLs)."""
    if "://" not in text:
        return text
    return _URL_IN_TEXT.sub(lambda m: mask_url(m.group(0)), text)


# parameters handed to a notebook kernel: papermill writes them into the executed
# notebook, so they go masked, and the masked values' real ones go through the
# kernel's environment under this name (JSON), which no file keeps
SECRETS_ENV = "BENCHLIB_NOTEBOOK_SECRETS"


def hide_secrets(params: dict) -> tuple[dict, dict]:
    """``params`` with every secret masked, and the real values of the keys that changed."""
    masked = mask_mapping(params)
    return masked, {k: v for k, v in params.items() if masked[k] != v}


def restore_secrets(params: dict, environ=None) -> dict:
    """``params`` as :func:`hide_secrets` masked them, each key whose masked value still
    stands given back its real one from :data:`SECRETS_ENV`; as they are without it."""
    import json
    import os
    raw = (os.environ if environ is None else environ).get(SECRETS_ENV)
    real = json.loads(raw) if raw else {}
    return {k: real[k] if k in real and mask_mapping({k: real[k]})[k] == v else v
            for k, v in params.items()}
