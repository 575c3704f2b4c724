"""BucketStates: a bucket's chunks read with one state call and written with one, untouched chunks as read."""

from __future__ import annotations

import pickle

import pytest

from operators.runtime.run_errors import WorkDirMismatchError
from operators.runtime.spark_bucket_state import LAYOUT_FILE, BucketStates, by_chunk, check_state_layout
from operators.runtime.spark_edges import chunk_of


class CountingListState:
    """A ListState of one grouping key that counts the calls a processor makes (each a JVM round trip)."""

    def __init__(self, elements: list[tuple] | None = None):
        self.elements, self.calls = elements, []

    def get(self):
        self.calls.append("get")
        return iter(list(self.elements or []))

    def put(self, elements: list[tuple]) -> None:
        assert elements, "Spark refuses an empty put: clear instead"
        self.calls.append("put")
        self.elements = list(elements)

    def clear(self) -> None:
        self.calls.append("clear")
        self.elements = None


def stored(state: CountingListState) -> dict[int, dict]:
    return {chunk: pickle.loads(data) for chunk, data in state.elements or []}


def test_a_batch_over_many_chunks_makes_one_read_and_one_write():
    state = CountingListState()
    bucket = BucketStates(state)
    texts = [f"key {i}" for i in range(500)]
    for chunk, members in by_chunk(texts, 1, 64).items():
        bucket.chunk(chunk).update({text: len(text) for text in members})
    bucket.save()
    assert len(by_chunk(texts, 1, 64)) == 64  # every chunk touched, still two calls
    assert state.calls == ["get", "put"]
    assert {text: n for chunk in stored(state).values() for text, n in chunk.items()} == {t: len(t) for t in texts}


def test_untouched_chunks_keep_their_bytes_and_emptied_chunks_are_dropped():
    state = CountingListState()
    first = BucketStates(state)
    first.chunk(3)["a"] = 1
    first.chunk(5)["b"] = 2
    first.save()
    before = dict(state.elements)

    second = BucketStates(state)
    del second.chunk(3)["a"]
    second.save()
    assert dict(state.elements) == {5: before[5]}  # chunk 5 not unpickled: the same bytes written back

    third = BucketStates(state)
    third.chunk(5).clear()
    third.save()
    assert state.elements is None and state.calls[-1] == "clear"


def test_a_read_only_batch_writes_nothing():
    state = CountingListState([(1, pickle.dumps({"a": 1}))])
    bucket = BucketStates(state)
    bucket.save()
    assert state.calls == ["get"]


def test_chunks_follow_the_key_hash():
    texts = [f"k{i}" for i in range(50)]
    assert all(chunk == chunk_of(text, 4, 8) for chunk, members in by_chunk(texts, 4, 8).items() for text in members)


def test_a_checkpoint_of_the_earlier_layout_is_refused_in_one_line(tmp_path):
    check_state_layout(tmp_path / "new", fresh=True)
    check_state_layout(tmp_path / "new", fresh=False)  # resumed in the layout it was written in
    (tmp_path / "old").mkdir()  # committed batches, but no layout recorded: the MapState layout
    with pytest.raises(WorkDirMismatchError, match="MapState entry per chunk.*new work directory"):
        check_state_layout(tmp_path / "old", fresh=False)
    (tmp_path / "new" / LAYOUT_FILE).write_text("something else")
    with pytest.raises(WorkDirMismatchError, match="something else"):
        check_state_layout(tmp_path / "new", fresh=False)
