"""Sluice's own version, ``sluice.__version__`` (not the Oracle release it answers as:
``Connection.version``); here so that a connection can name it without importing the package."""

__version__ = "0.1.0"
