"""BucketStates: a bucket's chunks read with one state call and written with one, untouched chunks as read."""

from __future__ import annotations

import pickle

import pytest

from operators.runtime.run_errors import WorkDirMismatchError
from operators.runtime.spark_bucket_state import LAYOUT_FILE, BucketStates, check_state_layout
from operators.runtime.spark_edges import chunk_of
from operators.runtime.spark_state_codec import StateCodec


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
    """Chunk → key text → decoded state."""
    return {chunk: {text: pickle.loads(data) for text, data in pickle.loads(states).items()}
            for chunk, states in state.elements or []}


def test_a_batch_over_many_chunks_makes_one_read_and_one_write():
    state = CountingListState()
    bucket = BucketStates(state, 1, 64)
    texts = [f"key {i}" for i in range(500)]
    for text in texts:
        bucket.put(text, len(text))
    bucket.save()
    assert len({chunk_of(text, 1, 64) for text in texts}) == 64  # every chunk touched, still two calls
    assert state.calls == ["get", "put"]
    assert {text: n for chunk in stored(state).values() for text, n in chunk.items()} == {t: len(t) for t in texts}
    assert all(chunk == chunk_of(text, 1, 64) for chunk, members in stored(state).items() for text in members)


def test_untouched_chunks_and_keys_keep_their_bytes_and_emptied_chunks_are_dropped():
    a, b, c = "a", next(t for t in map(str, range(100)) if chunk_of(t, 1, 8) != chunk_of("a", 1, 8)), "c"
    state = CountingListState()
    first = BucketStates(state, 1, 8)
    first.put(a, 1)
    first.put(b, 2)
    first.save()
    before = dict(state.elements)

    second = BucketStates(state, 1, 8)
    assert second.get(a) == 1 and second.get(c) is None
    second.put(a, None)
    second.save()
    assert dict(state.elements) == {chunk_of(b, 1, 8): before[chunk_of(b, 1, 8)]}  # b's chunk was not opened

    third = BucketStates(state, 1, 8)
    third.put(b, None)
    third.save()
    assert state.elements is None and state.calls[-1] == "clear"


def test_a_key_is_decoded_only_when_read_and_its_neighbours_stay_encoded():
    class Counting(StateCodec):
        decoded = 0

        def decode(self, data: bytes):
            Counting.decoded += 1
            return super().decode(data)

    state = CountingListState()
    bucket = BucketStates(state, 1, 1)
    for i in range(10):
        bucket.put(str(i), [i])
    bucket.save()
    again = BucketStates(state, 1, 1, Counting())
    assert again.get("3") == [3]
    again.put("3", [3, 3])
    again.save()
    assert Counting.decoded == 1
    assert stored(state)[0] == {str(i): [i, 3] if i == 3 else [i] for i in range(10)}


def test_a_read_only_batch_writes_nothing():
    state = CountingListState([(0, pickle.dumps({"a": pickle.dumps(1)}))])
    bucket = BucketStates(state, 1, 1)
    assert bucket.get("a") == 1
    bucket.save()
    assert state.calls == ["get"]


def test_a_checkpoint_of_the_earlier_layout_is_refused_in_one_line(tmp_path):
    check_state_layout(tmp_path / "new", fresh=True)
    check_state_layout(tmp_path / "new", fresh=False)  # resumed in the layout it was written in
    (tmp_path / "old").mkdir()  # committed batches, but no layout recorded: the MapState layout
    with pytest.raises(WorkDirMismatchError, match="MapState entry per chunk.*new work directory"):
        check_state_layout(tmp_path / "old", fresh=False)
    (tmp_path / "new" / LAYOUT_FILE).write_text("bucket chunks in a ListState")  # before encoded key states
    with pytest.raises(WorkDirMismatchError, match="kept as bucket chunks in a ListState, which this view"):
        check_state_layout(tmp_path / "new", fresh=False)
    # before the pages of RPAI trees and global MIN/MAX: their state one chunk, never to be read as pages
    (tmp_path / "new" / LAYOUT_FILE).write_text("bucket chunks of encoded key states in a ListState, operators in one line")
    with pytest.raises(WorkDirMismatchError, match="operators in one line, which this view does not read.*MIN/MAX in pages"):
        check_state_layout(tmp_path / "new", fresh=False)
    (tmp_path / "new" / LAYOUT_FILE).write_text("something else")
    with pytest.raises(WorkDirMismatchError, match="something else"):
        check_state_layout(tmp_path / "new", fresh=False)
