"""The tokenizing worker: the ids of sequential tokenizing, whatever happens to the worker."""

from __future__ import annotations

import logging
import os
import random
import signal
import sys
from collections.abc import Iterator

import numpy as np
import numpy.typing as npt
import pytest

from workspace_tools.core.backends.embedded import tokenizing as token_split
from workspace_tools.core.backends.embedded.token_worker import pack_strings, unpack_strings
from workspace_tools.core.backends.embedded.tokenizing import SplitTokenizer, worker_allowed
from workspace_tools.core.text.tokenizer import Tokenizer

_SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "ta", "vi", "zo", "pe", "qu", "the", "and", "of"]
_EXTRAS = [
    "parseHttpRequest",
    "snake_case_name",
    "foo.bar",
    "well-known",
    "café",
    "東京大学",
    "p53",
]


def _texts(count: int, *, seed: int) -> list[str]:
    """Texts whose words keep bringing new terms (a long tail), with identifiers and CJK."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        words = []
        for _ in range(rng.randint(0, 30)):
            if rng.random() < 0.05:
                words.append(rng.choice(_EXTRAS))
            else:
                size = min(int(rng.paretovariate(1.2)), 5)
                words.append("".join(rng.choice(_SYLLABLES) for _ in range(size)))
        out.append(" ".join(words) + rng.choice(["", ".", ", (x)", " [a](b/c.md)"]))
    return out


def _same(got: list[npt.NDArray[np.int32]], want: list[npt.NDArray[np.int32]]) -> None:
    assert len(got) == len(want)
    for a, b in zip(got, want, strict=True):
        assert a.dtype == np.int32
        assert a.tolist() == b.tolist()


@pytest.fixture
def split() -> Iterator[SplitTokenizer]:
    made = SplitTokenizer(Tokenizer(), bulk=10)
    yield made
    made.close()


def test_worker_ids_equal_sequential_ids_across_batches_and_a_renumbering(
    split: SplitTokenizer,
) -> None:
    reference = Tokenizer()
    batches = [_texts(300, seed=n) for n in range(6)]
    for number, batch in enumerate(batches):
        _same(split.term_ids(batch), [reference.term_ids(t) for t in batch])
        assert list(split.tokenizer.vocab.items()) == list(reference.vocab.items())
        if number == 2:  # a merge compacts the vocabulary: half the terms go, ids change
            kept = list(reference.vocab)[1::2]
            reference.set_vocabulary(kept)
            split.tokenizer.set_vocabulary(kept)
    assert split.worker is not None
    assert split.worker_texts > 0
    assert split.failures == 0


def test_small_changes_stay_in_this_process() -> None:
    split = SplitTokenizer(Tokenizer())
    texts = _texts(token_split.BULK_TEXTS - 1, seed=5)
    split.term_ids(texts)
    assert split.worker is None
    assert split.worker_texts == 0


def test_a_change_offered_whole_then_tokenized_here_counts_once() -> None:
    """The backend offers each change whole first: one of 1,000 texts is not two in the stream."""
    split = SplitTokenizer(Tokenizer())
    texts = _texts(token_split.BULK_TEXTS // 2, seed=6)
    assert split.start(texts) is None
    split.term_ids(texts)
    assert split.worker is None and split.worker_texts == 0


def test_a_worker_killed_mid_change_falls_back_to_the_same_ids(
    split: SplitTokenizer, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    reference = Tokenizer()
    warm = _texts(100, seed=6)
    _same(split.term_ids(warm), [reference.term_ids(t) for t in warm])
    assert split.worker is not None
    worker = split.worker
    real_submit = token_split.TokenWorker.submit

    def submit_then_die(self: token_split.TokenWorker, texts: list[str], **options: bool) -> None:
        real_submit(self, texts, **options)
        os.kill(self.pid, signal.SIGKILL)

    monkeypatch.setattr(token_split.TokenWorker, "submit", submit_then_die)
    batch = _texts(300, seed=7)
    with caplog.at_level(logging.DEBUG, logger=token_split.__name__):
        _same(split.term_ids(batch), [reference.term_ids(t) for t in batch])
    assert "tokenizing worker given up" in caplog.text
    assert worker.helper.process.poll() is not None
    assert split.failures == 1
    monkeypatch.undo()
    again = _texts(300, seed=8)  # a new worker, with a new vocabulary of its own
    _same(split.term_ids(again), [reference.term_ids(t) for t in again])
    assert split.worker is not None
    assert split.worker is not worker


def test_a_worker_that_cannot_start_falls_back(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(sys, "executable", "/nonexistent/python")
    split = SplitTokenizer(Tokenizer(), bulk=10)
    reference = Tokenizer()
    with caplog.at_level(logging.DEBUG, logger=token_split.__name__):
        for seed in range(3):
            batch = _texts(100, seed=seed)
            _same(split.term_ids(batch), [reference.term_ids(t) for t in batch])
    assert "/nonexistent/python" in caplog.text
    assert split.failures == 2  # then it stops trying
    assert split.worker is None


def test_a_worker_that_hangs_is_given_up(
    split: SplitTokenizer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    reference = Tokenizer()
    warm = _texts(100, seed=6)
    _same(split.term_ids(warm), [reference.term_ids(t) for t in warm])
    monkeypatch.setattr(token_split, "_DEADLINE", 0.3)
    monkeypatch.setattr(token_split, "_PER_TEXT", 0.0)
    batch = _texts(300, seed=9)
    assert split.worker is not None
    worker = split.worker
    os.kill(worker.pid, signal.SIGSTOP)
    with caplog.at_level(logging.DEBUG, logger=token_split.__name__):
        _same(split.term_ids(batch), [reference.term_ids(t) for t in batch])
    assert "the worker exited or did not answer in time" in caplog.text
    assert worker.helper.process.poll() is not None  # killed, not left stopped


def test_a_worker_with_other_settings_is_not_used(
    split: SplitTokenizer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    reference = Tokenizer()
    other = {**reference.fingerprint(), "stemmer": None}
    monkeypatch.setattr(split.tokenizer, "fingerprint", lambda: other)
    batch = _texts(300, seed=10)
    with caplog.at_level(logging.DEBUG, logger=token_split.__name__):
        _same(split.term_ids(batch), [reference.term_ids(t) for t in batch])
    assert "the worker tokenizes with {" in caplog.text
    assert "'stemmer': 'english'" in caplog.text
    assert split.worker_texts == 0
    assert split.failures == 1


def test_close_stops_the_worker_and_a_later_bulk_change_starts_another(
    split: SplitTokenizer,
) -> None:
    reference = Tokenizer()
    batch = _texts(100, seed=11)
    _same(split.term_ids(batch), [reference.term_ids(t) for t in batch])
    assert split.worker is not None
    first = split.worker
    split.close()
    assert first.helper.process.poll() is not None
    assert split.worker is None
    batch = _texts(100, seed=12)
    _same(split.term_ids(batch), [reference.term_ids(t) for t in batch])
    assert split.worker is not None
    assert split.worker.pid != first.pid


def test_the_off_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    for value in ("0", "false", "off", "No"):
        monkeypatch.setenv(token_split.WORKER_ENV, value)
        assert not worker_allowed()
        assert worker_allowed(option=True)
    monkeypatch.setenv(token_split.WORKER_ENV, "1")
    assert worker_allowed()
    assert not worker_allowed(option=False)
    monkeypatch.delenv(token_split.WORKER_ENV)
    assert worker_allowed()
    split = SplitTokenizer(Tokenizer(), enabled=False, bulk=10)
    reference = Tokenizer()
    batch = _texts(100, seed=13)
    _same(split.term_ids(batch), [reference.term_ids(t) for t in batch])
    assert split.worker is None


def test_a_forked_child_neither_uses_nor_stops_its_parents_worker(split: SplitTokenizer) -> None:
    reference = Tokenizer()
    warm = _texts(100, seed=14)
    _same(split.term_ids(warm), [reference.term_ids(t) for t in warm])
    assert split.worker is not None
    parent_worker = split.worker
    batch = _texts(100, seed=15)
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the child
        code = 1
        try:
            mine = [reference.term_ids(t) for t in batch]
            got = split.term_ids(batch)
            ok = all(a.tolist() == b.tolist() for a, b in zip(got, mine, strict=True))
            ok = ok and split.worker is not None and split.worker is not parent_worker
            split.close()
            code = 0 if ok else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert parent_worker.alive()  # the child's close stopped its own worker only
    _same(split.term_ids(batch), [reference.term_ids(t) for t in batch])
    assert split.worker is parent_worker


def test_a_worker_whose_vocabulary_grew_too_large_is_replaced(
    split: SplitTokenizer, monkeypatch: pytest.MonkeyPatch
) -> None:
    reference = Tokenizer()
    monkeypatch.setattr(token_split, "_TERMS_KEPT", 50)
    first = _texts(100, seed=16)
    _same(split.term_ids(first), [reference.term_ids(t) for t in first])
    worker = split.worker
    assert worker is not None
    again = _texts(100, seed=17)
    _same(split.term_ids(again), [reference.term_ids(t) for t in again])
    assert worker.helper.process.poll() is not None
    assert split.worker is not None
    assert split.worker is not worker


def test_texts_cross_the_pipe_as_they_are() -> None:
    texts = ["", "plain", "café 東京", "a\ud800b", "\U0001f600 x\ny", " ", "ﷺ"]
    assert unpack_strings(pack_strings(texts)) == texts
    assert unpack_strings(pack_strings([])) == []
    with pytest.raises(ValueError, match="the packed strings do not add up"):
        unpack_strings(pack_strings(["abc"])[:-1])


def test_a_job_started_whole_gives_the_sequential_ids_when_finished(split: SplitTokenizer) -> None:
    reference = Tokenizer()
    for seed in (20, 21):
        batch = _texts(300, seed=seed)
        job = split.start(batch)
        assert job is not None and split.worker is not None
        _same(split.finish(job), [reference.term_ids(t) for t in batch])
    assert split.start(_texts(5, seed=22)) is None  # not a bulk change: tokenized here
