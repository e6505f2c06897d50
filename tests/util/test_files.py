"""Atomic file writes (sourcesum.util.files): a full disk is an error naming the file."""

from __future__ import annotations

import errno

from support.cli import one_error_line

SPLIT = "synth_alpha_sys"


def test_a_full_disk_names_the_file(tmp_path, monkeypatch, capsys, scores_dir):
    import os

    real = os.fsync

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    line = one_error_line(capsys, "run", "--ranker", "lead", "--split", SPLIT, "--no-progress")
    monkeypatch.setattr(os, "fsync", real)
    assert "No space left on device" in line and str(scores_dir) in line
