"""Summarize a subunit stream: one JSON object a line, one per test.

Version 2, or version 1 (the runs stestr 2.x keeps in its repository).

Run by the base's venv python (any Python that has python-subunit and
testtools, 2.7 included), reading the stream on stdin.  It is a script, not
part of the tool's import graph.  With ``--details`` a test that did not
pass also gets ``details``: every text attachment (traceback, captured
logging, stdout), each under its name, for a flake batch's logs.
"""

import io
import json
import sys

import subunit
import testtools


DETAILS = '--details' in sys.argv[1:]
# the first byte of a subunit version 2 packet
V2 = b'\xb3'


def _text(content):
    try:
        return u''.join(content.iter_text())
    except Exception:
        return u'(not text: %s)' % content.content_type


def _emit(test):
    if '.' not in test['id']:
        return
    reason = u''
    for name in ('reason', 'traceback'):
        if name in test['details']:
            reason += u''.join(test['details'][name].iter_text())
    start, stop = (test['timestamps'] + [None, None])[:2]
    duration = (stop - start).total_seconds() if start and stop else None
    record = {'id': test['id'], 'status': test['status'], 'reason': reason,
              'duration': duration}
    if DETAILS and test['status'] not in ('success', 'exists'):
        record['details'] = dict(
            (name, _text(content))
            for name, content in sorted(test['details'].items()))
    sys.stdout.write(json.dumps(record) + '\n')


def main():
    stdin = io.BytesIO(getattr(sys.stdin, 'buffer', sys.stdin).read())
    result = testtools.StreamToDict(_emit)
    if stdin.getvalue()[:1] not in (V2, b''):
        # version 1, as old stestr (2.x, rocky's) keeps its runs
        result = testtools.ExtendedToStreamDecorator(result)
        result.startTestRun()
        try:
            subunit.ProtocolTestCase(stdin).run(result)
        finally:
            result.stopTestRun()
        return
    stream = subunit.ByteStreamToStreamResult(stdin, non_subunit_name='out')
    result.startTestRun()
    try:
        stream.run(result)
    finally:
        result.stopTestRun()


if __name__ == '__main__':
    main()
