"""What tests share: ports (`ports`), servers in the test's loop, a thread or a process
(`servers`), and Chromium (`browsers`). A test module never imports another test module;
what two of them need lives here (tests/kit/test_test_layout.py holds that)."""
