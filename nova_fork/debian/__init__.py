"""Debian's own nova package: a quilt series for a suite.

archive reads Debian's archive, debsource unpacks a suite's source
package with Debian's patches, debstack runs nova's tests on the suite's
own Python stack, series writes and checks the series.
"""
