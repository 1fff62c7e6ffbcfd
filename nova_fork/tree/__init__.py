"""The fork's tree: a pinned sdist in, a reproducible git tree out.

fetch and verify the sdist, build the tree from the series (gitutils runs
git the same way everywhere, detect reads patches), and the way back:
refresh writes an edited tree's commits into patches/, backport writes a
line's commits as cherry-picks of the line above it.
"""
