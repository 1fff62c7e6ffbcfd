"""The tox environments of each line, generated from bases.ini.

``toxfile.py`` (tox's inline plugin) declares them, so that adding a line
to bases.ini adds its environments with no edit of tox.ini.
"""

from nova_fork import config
from nova_fork.env import chroot

# verb: (description, nova-fork command); %(line)s and %(release)s are the
# line's, as bases.ini gives them
VERBS = {
    'functional': (
        "The fork's tests on line %(line)s (nova %(release)s): its functional"
        " selection from bases.ini, then the unit tests of the touched"
        ' modules.  Arguments after -- go to stestr.',
        ('test', '%(line)s')),
    'reproduce': (
        'The regression tests fail on pristine nova %(release)s for the bug'
        " and pass on the fork (line %(line)s).",
        ('reproduce', '%(line)s')),
    'mutants': (
        'Line %(line)s: leaving out each unit of the fix makes a regression'
        ' test fail.',
        ('mutants', '%(line)s')),
    'gate': (
        "Nova's gate on line %(line)s (nova %(release)s) through its own"
        ' tox.ini: pep8 (flake8 with hacking), the unit and functional'
        ' suites (each failure run again on the pristine release) and'
        ' releasenotes, with counts and times.  Arguments after -- go to'
        ' nova-fork gate (--pristine, --only, --select).',
        ('gate', '%(line)s')),
    'export': (
        'Export line %(line)s (format-patch, and quilt where the line has'
        ' it), checked on nova %(release)s and its other releases.',
        ('export', '%(line)s')),
}


DEBIAN = (
    "Debian %(suite)s's own nova package: nova-fork debian %(suite)s writes"
    ' dist/debian/%(suite)s (a quilt series with DEP-3 headers for the'
    ' units it lacks), pushes it with no fuzz after Debian\'s patches,'
    ' builds the source package, and runs the unit tests of the touched'
    " modules and the regression tests on the suite's own Python stack"
    ' (a Debian root; needs root).')


def envs(root, posargs=()):
    """{env name: (description, [command argv, ...])}.

    The envs of every line, and debian-SUITE for each Debian suite.
    """
    result = {'debian-%s' % suite: (DEBIAN % {'suite': suite},
                                    [['nova-fork', 'debian', suite]])
              for suite in chroot.SUITES}
    for line, base in config.load_bases(root).items():
        for verb, (description, argv) in VERBS.items():
            values = {'line': line, 'release': base.nova}
            command = ['nova-fork'] + [a % values for a in argv]
            commands = [command]
            if verb == 'functional' and posargs:
                commands = [command + ['--'] + list(posargs)]
            if verb == 'gate':
                commands = [command + list(posargs)]
            if verb == 'export':
                commands += [command + ['--release', version]
                             for version, _ in base.releases]
            result['%s-%s' % (verb, line)] = (description % values, commands)
    return result
