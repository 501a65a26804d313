"""Helpers the tests share (not tests themselves): dry-run plans, small videos, fault injection, fixtures, the
Slurm test cluster, the import layering of the library."""
