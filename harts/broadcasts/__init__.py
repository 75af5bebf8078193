"""Broadcasts: the algorithms of the source papers run on the machine and read back copy by copy."""
