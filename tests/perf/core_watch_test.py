#!/usr/bin/python3
"""perf/compare's CoreWatch against a stand-in for weft-membw --watch that replays a script of
round trips: a sweep that an off spell (cores far apart, or one core's two threads) falls in runs
again once the cores are near, a sweep is kept after --spell-tries runs, and samples that
measured nothing or come from a watcher that has died mark nothing off."""

import importlib.machinery
import importlib.util
import io
import os
import stat
import sys
import tempfile
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def load_compare():
    loader = importlib.machinery.SourceFileLoader("compare", os.path.join(ROOT, "perf", "compare"))
    spec = importlib.util.spec_from_loader("compare", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


compare = load_compare()


class FakeRunner:
    def __init__(self):
        self.log = io.StringIO()


def fake_watcher(directory, phases):
    """A script printing weft-membw's watch lines every 20 ms: phases is [(seconds, ns)], where
    seconds None lasts until it is killed; after the last finite phase it exits."""
    path = os.path.join(directory, "watch")
    with open(path, "w") as f:
        f.write(f"""#!{sys.executable}
import time
for seconds, ns in {phases!r}:
    end = time.monotonic() + (1e9 if seconds is None else seconds)
    while time.monotonic() < end:
        print("watch", time.monotonic_ns(), ns, flush=True)
        time.sleep(0.02)
""")
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
    return path


class CoreWatchTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.runs = 0

    def tearDown(self):
        self.dir.cleanup()

    def sweep(self):
        self.runs += 1
        time.sleep(0.5)
        return self.runs

    def watch(self, phases, tries):
        """A CoreWatch over the script, once its first sample is in."""
        watch = compare.CoreWatch(FakeRunner(), fake_watcher(self.dir.name, phases), tries)
        limit = time.monotonic() + 10
        while not watch.times and time.monotonic() < limit:
            time.sleep(0.01)
        return watch

    def test_near_runs_once(self):
        with self.watch([(None, 60)], 3) as watch:
            self.assertEqual(watch.steady("sweep", self.sweep), 1)
        self.assertEqual((watch.reruns, watch.kept_off), (0, []))
        self.assertEqual(watch.off_share(), (0, 0))

    def test_far_spell_runs_again_once_near(self):
        # The first run starts at once and catches the far spell from 0.3 s to 1.1 s; the second
        # waits for its end.
        with self.watch([(0.3, 60), (0.8, 320), (None, 60)], 3) as watch:
            start = time.monotonic()
            self.assertEqual(watch.steady("sweep", self.sweep), 2)
            self.assertGreater(time.monotonic() - start, 1.0)
        self.assertEqual((watch.reruns, watch.kept_off), (1, []))
        self.assertIn("an off spell fell in this run (sweep)", watch.runner.log.getvalue())

    def test_shared_core_spell_runs_again_once_near(self):
        # 28 ns: the two CPUs are one core's threads, from 0.3 s to 1.1 s.
        with self.watch([(0.3, 60), (0.8, 28), (None, 60)], 3) as watch:
            self.assertEqual(watch.steady("sweep", self.sweep), 2)
        self.assertEqual((watch.reruns, watch.kept_off), (1, []))
        far, shared = watch.off_share()
        self.assertEqual(far, 0)
        self.assertGreater(shared, 0)

    def test_kept_after_tries(self):
        compare.NEAR_WAIT = 0.1  # far all along: each run waits this long first
        try:
            with self.watch([(None, 330)], 2) as watch:
                self.assertEqual(watch.steady("sweep", self.sweep), 2)
        finally:
            compare.NEAR_WAIT = 10
        self.assertEqual((watch.reruns, watch.kept_off), (1, ["sweep"]))
        self.assertEqual(watch.off_share(), (1, 0))

    def test_one_try_only_records(self):
        with self.watch([(None, 330)], 1) as watch:
            self.assertEqual(watch.steady("sweep", self.sweep), 1)
        self.assertEqual((watch.reruns, watch.kept_off), (0, ["sweep"]))

    def test_unmeasured_and_starved_samples_are_not_off(self):
        for ns in (0, 5000):
            with self.subTest(ns=ns), self.watch([(None, ns)], 3) as watch:
                self.assertEqual(watch.steady("sweep", self.sweep), self.runs)
                self.assertEqual((watch.reruns, watch.kept_off), (0, []))
                self.assertIsNone(watch.off_share())

    def test_dead_watcher_marks_nothing_off(self):
        # The watcher's last word is far, then it exits: later sweeps neither wait nor rerun.
        with self.watch([(0.05, 320)], 3) as watch:
            time.sleep(1.5)
            start = time.monotonic()
            self.assertEqual(watch.steady("sweep", self.sweep), 1)
            self.assertLess(time.monotonic() - start, 2)
        self.assertEqual((watch.reruns, watch.kept_off), (0, []))


if __name__ == "__main__":
    unittest.main()
