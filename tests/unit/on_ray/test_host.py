"""The part of a Ray worker that runs on a node, without Ray: files checked by hash, the worker process's lines, stop."""

import hashlib
import json

import pytest

from kafkabench.on_ray.host import WorkerHost


def test_a_shared_file_is_written_only_when_its_hash_matches(tmp_path):
    host, data = WorkerHost(), b"payload" * 10
    target = tmp_path / "files" / "abc" / "payload.bin"
    with pytest.raises(ValueError, match="another sha256"):
        host.put_file(str(target), data, hashlib.sha256(b"other").hexdigest())
    assert not target.exists()
    host.put_file(str(target), data, hashlib.sha256(data).hexdigest())
    assert target.read_bytes() == data and not list(target.parent.glob("*.part"))


def test_a_workers_outputs_come_back_by_relative_name_with_their_hashes(tmp_path):
    (tmp_path / "history" / "sub").mkdir(parents=True)
    (tmp_path / "history" / "acks.bin").write_bytes(b"\x01\x02")
    (tmp_path / "history" / "sub" / "meta.json").write_text("{}")
    found = WorkerHost().files_under(str(tmp_path / "history"))
    assert found == {"acks.bin": (b"\x01\x02", hashlib.sha256(b"\x01\x02").hexdigest()),
                     "sub/meta.json": (b"{}", hashlib.sha256(b"{}").hexdigest())}
    assert WorkerHost().files_under(str(tmp_path / "missing")) == {}


def test_the_worker_process_answers_through_the_host_and_ends_when_stopped():
    host = WorkerHost()
    assert host.start("confluent") > 0
    assert host.write(json.dumps({"type": "task", "scenario": "nope", "client": "confluent"}) + "\n")
    lines = []
    for _ in range(100):  # at most 20 s: the worker imports its client first
        lines += host.read(0.2) or []
        if lines:
            break
    assert json.loads(lines[0])["type"] == "error" and "nope" in lines[0]
    assert host.stop(10) is not None
    assert host.read(0.1) is None  # its output has ended, and stays ended
    assert not host.write("{}\n")
