"""No secret in a notebook: an experiment run through papermill keeps its executed
notebook in the experiment folder; the password of the target's URL (every printable
character: tests/faults/leaks.py) reaches no file
there (the injected parameters are masked, the secret goes through the kernel's
environment), and the run itself used it."""
from __future__ import annotations

import stat

import pytest
import yaml
from leaks import PASSWORD, encoded, leaks


@pytest.mark.postgres
@pytest.mark.slow
def test_a_notebook_run_writes_no_password(pg_own_db, tmp_path):
    from benchlib import load_results, reports
    user_host, db = pg_own_db.split("://", 1)[1].split("/", 1)
    user, host = user_host.split("@", 1)
    url = f"postgresql://{user}:{encoded()}@{host}/{db}"   # the server trusts: any password works
    exp = tmp_path / "exp.yaml"
    exp.write_text(yaml.safe_dump({
        "experiment": "nbsecret", "workload": "ycsb",
        "properties": {"recordcount": 200, "operationcount": 300, "readproportion": 1.0,
                       "updateproportion": 0.0},
        "targets": [{"name": "pg", "url": url}], "load": {"threads": 1},
        "run": {"threads": [1], "processes": 1}, "seed": 1}))
    data = tmp_path / "data"
    log = reports.run_experiment_notebook(exp, data_dir=data, progress=False)
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    res = load_results(data / "nbsecret")
    assert res["runs"]["status"].tolist() == ["ok"]      # the real URL reached the run
    assert not leaks(data)                               # every printable character in it
    assert "***" in log.read_text()                      # the injected URL, masked


def test_masked_parameters_come_back_only_where_they_stand():
    from benchlib.masking import SECRETS_ENV, hide_secrets, restore_secrets
    params = {"targets": [{"name": "m", "url": f"mysql://root:{PASSWORD}@h/db"}],
              "properties": {"db.passwd": PASSWORD, "recordcount": 5}, "seed": 1}
    masked, secrets = hide_secrets(params)
    assert PASSWORD not in repr(masked) and set(secrets) == {"targets", "properties"}
    import json
    env = {SECRETS_ENV: json.dumps(secrets)}
    assert restore_secrets(masked, env) == params
    changed = {**masked, "targets": [{"name": "m", "url": "sqlite"}]}   # a value the user set anew
    assert restore_secrets(changed, env)["targets"] == [{"name": "m", "url": "sqlite"}]
    assert restore_secrets(masked, {}) == masked
