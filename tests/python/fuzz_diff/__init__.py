"""Differential fuzz of graft against Debian's PyTorch (docs/notes/testing.md, "Differential fuzz").

generator.py  discovers the callable surface (in a child) and turns (seed, callable, round) into a
              case: a JSON description of the call's arguments (tensors as shape/dtype/layout/values
              recipes), plus the reproducer snippet of a case.
runner.py     the parent side (runs cases in child processes, catches crashes and hangs, collects
              the summary) and the child side (builds the inputs for both libraries, calls, compares).
compare.py    normalisation of results and errors and the classification of one case.
known_differences.json  the gating (callable, class) findings that are known and explained, one
              entry each: callable, class (compare.GATING: crashes, hangs, wrong values and gradients,
              changed inputs, one side accepting what the other refuses, other exception types),
              reason ("torch 1.13 bug: ...", "edge: ...", "graft extension: ...", what graft's
              binding accepts or refuses and why), in_slice (the fixed-seed slice reproduces it) and
              an example call.
              tests/python/test_fuzz_diff.py fails on any gating finding not in it; delete an entry
              when its bug is fixed (the slice prints in_slice entries it no longer sees).

Nothing here imports graft or torch at module level: the parent stays free of both.
"""
