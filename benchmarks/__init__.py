"""Benchmarks: each script prints figures (BENCHMARKS.md records them with the command); students.py is the simulated
class that classroom.py and the serving tests share."""
