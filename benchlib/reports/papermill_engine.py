"""``papermill --engine benchlib``: papermill's own engine (nbclient) that keeps secrets
out of the executed notebook, for ``experiment.ipynb`` run from the papermill command line
as the README writes it.

Plain papermill writes the parameters as given into the notebook it executes (the
injected cell and ``metadata.papermill.parameters``): a target URL's password would sit
in clear in ``data/<experiment>/experiment.ipynb``. This engine, before papermill's first
write, masks every secret in both (:func:`..masking.hide_secrets`, as
:func:`.execute.run_experiment_notebook` does) and hands the real values to the kernel
through its environment (:data:`..masking.SECRETS_ENV`), where the notebook's
``masking.restore_secrets`` takes them back; it makes the output notebook's folder (a fresh
experiment has none) and the notebook private (0600) from its first byte.

Registered for papermill by the ``papermill.engine`` entry point ``benchlib``
(pyproject.toml); papermill's default engine is left as it is.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from papermill.engines import NBClientEngine
from papermill.translators import translate_parameters

from ..masking import SECRETS_ENV, hide_secrets

INJECTED = "injected-parameters"


def mask_injected(nb) -> dict:
    """Mask the secrets of ``nb``'s injected parameters (its cell and its papermill
    metadata) in place; returns the real values of the parameters masked."""
    meta = nb.metadata.get("papermill", {})
    params = dict(meta.get("parameters") or {})
    masked, secrets = hide_secrets(params)
    if not secrets:
        return {}
    meta["parameters"] = masked
    for cell in nb.cells:
        if INJECTED in cell.metadata.get("tags", []):
            language = nb.metadata.get("kernelspec", {}).get("language", "python")
            kernel = nb.metadata.get("kernelspec", {}).get("name", "python3")
            cell.source = translate_parameters(kernel, language, masked, "Parameters")
    return secrets


class MaskingEngine(NBClientEngine):
    """nbclient, with the secrets of the parameters masked before the notebook is written."""

    @classmethod
    def execute_notebook(cls, nb, kernel_name, output_path=None, **kwargs):
        secrets = mask_injected(nb)
        if output_path and "://" not in str(output_path):
            out = Path(output_path)
            out.parent.mkdir(parents=True, exist_ok=True)
            out.touch(mode=0o600)   # papermill writes into it as it goes: private from the start
            out.chmod(0o600)
        before = os.environ.get(SECRETS_ENV)
        os.environ[SECRETS_ENV] = json.dumps(secrets)   # the kernel's, never a file's
        try:
            return super().execute_notebook(nb, kernel_name, output_path=output_path, **kwargs)
        finally:
            if before is None:
                os.environ.pop(SECRETS_ENV, None)
            else:
                os.environ[SECRETS_ENV] = before
