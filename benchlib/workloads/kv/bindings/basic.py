"""kv on no database (YCSB's BasicDB's place): every operation succeeds at once, the
driver's own ceiling."""
from __future__ import annotations

from ....schema import OK


class BasicKv:
    conn = None

    @classmethod
    def open(cls, endpoint, table: str):
        return cls()

    @staticmethod
    def key_prefix(table: str) -> str:
        return ""

    @classmethod
    def clear(cls, target, table: str, key_size: int) -> None:
        pass

    @classmethod
    def after_load(cls, target, table: str) -> None:
        pass

    @classmethod
    def count_keys(cls, target, table: str) -> int | None:
        return None    # no store: nothing a rerun could check

    def read(self, key):
        return OK

    def insert(self, key, value):
        return OK

    def delete(self, key):
        return OK

    def update(self, key, value):
        return OK

    def scan(self, key, n):
        return OK

    def load(self, pairs):
        return OK

    def remove(self, keys):
        return OK

    def close(self):
        pass
