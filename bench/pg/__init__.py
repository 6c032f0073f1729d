"""The parts of ``bench/postgres.py``: one module per measurement, and what they share."""
