import io
import json
import subprocess
import sys

import subunit
import testtools

from nova_fork.proof import prove


def stream():
    """A subunit v2 stream: one test passes, one fails with a log."""
    out = io.BytesIO()
    result = subunit.StreamResultToBytes(out)
    result.status(test_id='m.T.test_ok', test_status='inprogress')
    result.status(test_id='m.T.test_ok', test_status='success')
    result.status(test_id='m.T.test_bad', test_status='inprogress')
    result.status(test_id='m.T.test_bad', file_name="pythonlogging:''",
                  file_bytes=b'INFO [nova.compute] two hostdevs\n',
                  mime_type='text/plain; charset=utf8', eof=True)
    result.status(test_id='m.T.test_bad', file_name='traceback',
                  file_bytes=b'AssertionError: wrong\n',
                  mime_type='text/plain; charset=utf8', eof=True)
    result.status(test_id='m.T.test_bad', test_status='fail')
    return out.getvalue()


# version 1, as stestr 2.x (rocky's) keeps a run in its repository
V1 = b'''time: 2026-12-07 05:20:53.000000Z
test: m.T.test_ok
time: 2026-12-07 05:20:54.500000Z
success: m.T.test_ok
test: m.T.test_bad
failure: m.T.test_bad [
AssertionError: wrong
]
test: m.T.test_skip
skip: m.T.test_skip [
not here
]
'''


def summary(*args, data=None):
    proc = subprocess.run(
        [sys.executable, str(prove.SUMMARY_SCRIPT)] + list(args),
        input=stream() if data is None else data, stdout=subprocess.PIPE,
        check=True)
    return dict((r['id'], r) for r in map(json.loads,
                                          proc.stdout.decode().splitlines()))


class SummaryTest(testtools.TestCase):

    def test_records_without_details(self):
        records = summary()
        self.assertEqual('success', records['m.T.test_ok']['status'])
        self.assertEqual('fail', records['m.T.test_bad']['status'])
        self.assertEqual('AssertionError: wrong\n',
                         records['m.T.test_bad']['reason'])
        self.assertNotIn('details', records['m.T.test_bad'])

    def test_version_1(self):
        records = summary(data=V1)
        self.assertEqual({'m.T.test_ok': 'success', 'm.T.test_bad': 'fail',
                          'm.T.test_skip': 'skip'},
                         {i: r['status'] for i, r in records.items()})
        self.assertEqual(1.5, records['m.T.test_ok']['duration'])
        self.assertIn('AssertionError: wrong', records['m.T.test_bad'][
            'reason'])
        self.assertEqual({}, summary(data=b''))

    def test_details_keep_a_failure_log(self):
        records = summary('--details')
        self.assertNotIn('details', records['m.T.test_ok'])
        self.assertEqual(
            {"pythonlogging:''": 'INFO [nova.compute] two hostdevs\n',
             'traceback': 'AssertionError: wrong\n'},
            records['m.T.test_bad']['details'])
