"""How a command prints a table: text (aligned, every column), CSV or JSON records."""
from __future__ import annotations

import sys


def emit(df, fmt: str) -> None:
    """``df`` on stdout as ``fmt``: text, csv or json."""
    if fmt == "csv":
        df.to_csv(sys.stdout, index=False)
    elif fmt == "json":
        print(df.to_json(orient="records", date_format="iso", indent=1))
    else:
        import pandas as pd
        with pd.option_context("display.max_rows", 500, "display.max_columns", 50, "display.width", 250):
            print(df.to_string(index=False) if len(df) else "(no rows)")
