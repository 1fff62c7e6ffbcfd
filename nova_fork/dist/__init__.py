"""What the fork is handed out as, under dist/.

export: git format-patch files (and quilt, a DEP-3 series); review: the
commits for Gerrit; sdist: a source tarball made by pbr.
"""
