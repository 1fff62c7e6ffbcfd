"""Build, test and export a patched Nova fork kept as a patch queue."""
