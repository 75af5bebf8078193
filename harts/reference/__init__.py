"""Functional reference models, pure Python and independent of the kernel, one module per paper: what an
algorithm delivers where, over which path, after how many transmissions and cut-throughs."""
