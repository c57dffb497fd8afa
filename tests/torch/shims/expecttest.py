"""A stand-in for the expecttest package, which torch.testing._internal imports and Debian does
not ship: its TestCase, whose inline-expectation asserts the distributed tests never use."""

import unittest

ACCEPT = False  # expecttest: whether to rewrite expectations in place (never here)


class TestCase(unittest.TestCase):
    def assertExpectedInline(self, actual, expect, skip=0):  # noqa: N802 (expecttest's name)
        self.assertEqual(actual, expect)
