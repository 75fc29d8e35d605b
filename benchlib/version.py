"""benchlib's version: the one place it is written (pyproject.toml reads it from here), at
the bottom layer so that a run folder's meta.json can carry it without importing the
package's public API."""
__version__ = "0.1.0"
