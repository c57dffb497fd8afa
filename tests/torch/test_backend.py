"""weft.torch against values computed in the test, DDP and ZeroRedundancyOptimizer against gloo,
every init method, and a killed rank. Run by ctest (label torch) with PYTHONPATH=<build>/python,
as `python3 -m unittest test_backend` from this folder."""

import unittest

from launch import run_ranks


class Backend(unittest.TestCase):
    def ranks_pass(self, case, world, **kw):
        results = run_ranks(case, world, **kw)
        for rank, (code, out) in enumerate(results):
            self.assertEqual(code, 0, f"{case}, {world} ranks: rank {rank} "
                             f"{'timed out' if code is None else f'exited with {code}'}:\n{out}")
        return results

    def test_every_op_and_type_2_ranks(self):
        self.ranks_pass("ops", 2)

    def test_every_op_and_type_3_ranks(self):
        self.ranks_pass("ops", 3)

    def test_every_op_and_type_4_ranks(self):
        self.ranks_pass("ops", 4)

    def test_unsupported_types_and_operators_raise_clear_errors(self):
        self.ranks_pass("errors", 2)

    def test_async_work_and_futures(self):
        self.ranks_pass("async", 3)

    def test_object_collectives(self):
        self.ranks_pass("objects", 3)

    def test_new_group(self):
        self.ranks_pass("groups", 4)

    def test_every_init_method(self):
        for init in ("env", "tcp", "file"):
            with self.subTest(init=init):
                self.ranks_pass("init", 3, init=init)

    def test_ddp_matches_gloo_2_ranks(self):
        self.ranks_pass("ddp", 2)

    def test_ddp_matches_gloo_3_ranks(self):
        self.ranks_pass("ddp", 3)

    def test_zero_redundancy_optimizer_matches_gloo(self):
        self.ranks_pass("zero", 3)

    def test_killed_rank_raises_on_the_others_within_the_timeout(self):
        results = run_ranks("killed", 3, extra_env={"WEFT_TEST_TIMEOUT": "10"}, timeout=120)
        self.assertEqual(results[2][0], 3, results[2][1])
        for rank in (0, 1):
            code, out = results[rank]
            self.assertEqual(code, 0, f"rank {rank}:\n{out}")
            self.assertIn("RuntimeError after", out)


if __name__ == "__main__":
    unittest.main()
