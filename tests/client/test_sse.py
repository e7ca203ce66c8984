"""The sans-IO SSE parser, fed synchronously, including byte-at-a-time and edge cases."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from a2a_trio.wire import SSEDecoder, SSEError, SSEEvent


def parse(*chunks: bytes) -> list[SSEEvent]:
    decoder = SSEDecoder()
    return [event for chunk in chunks for event in decoder.feed(chunk)]


def test_simple_event() -> None:
    assert parse(b"data: hello\n\n") == [SSEEvent("hello")]


def test_multiline_data_joins_with_newline() -> None:
    assert parse(b"data: one\ndata: two\ndata:\n\n") == [SSEEvent("one\ntwo\n")]


@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b"\r"])
def test_every_line_ending(eol: bytes) -> None:
    stream = b"id: 7" + eol + b"event: status" + eol + b"data: x" + eol + eol
    assert parse(stream) == [SSEEvent("x", event="status", id="7")]


def test_crlf_split_across_chunks_is_one_line_end() -> None:
    assert parse(b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n") == [SSEEvent("a\nb")]


def test_lone_cr_then_data_in_next_chunk() -> None:
    assert parse(b"data: a\r", b"data: b\r\r") == [SSEEvent("a\nb")]


def test_comments_are_counted_not_dispatched() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b": keepalive\n\n:another\n\ndata: x\n\n") == [SSEEvent("x")]
    assert decoder.comments == 2


def test_bom_is_skipped_only_at_start() -> None:
    assert parse(b"\xef\xbb\xbfdata: a\n\n") == [SSEEvent("a")]
    # a BOM split over chunks is still recognised
    assert parse(b"\xef", b"\xbb", b"\xbfdata: a\n\n") == [SSEEvent("a")]
    # later, the BOM bytes are just part of a field name, which is then ignored
    assert parse(b"data: a\n\n\xef\xbb\xbfdata: b\n\n") == [SSEEvent("a")]


def test_id_persists_and_nul_id_is_ignored() -> None:
    decoder = SSEDecoder()
    events = decoder.feed(b"id: 1\ndata: a\n\ndata: b\n\nid: x\0y\ndata: c\n\nid\ndata: d\n\n")
    assert [(e.data, e.id) for e in events] == [("a", "1"), ("b", "1"), ("c", "1"), ("d", "")]
    assert decoder.last_event_id == ""


def test_id_without_data_still_updates_last_event_id() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"id: 42\n\n") == []
    assert decoder.last_event_id == "42"


def test_an_unfinished_event_does_not_set_the_last_event_id() -> None:
    """A stream cut between an event's ``id:`` line and its end: a reader resuming from the
    last event id must get that event again, so its id counts only once it is complete."""
    decoder = SSEDecoder()
    assert decoder.feed(b"id: 1\ndata: a\n\nid: 2\ndata: b\n") == [SSEEvent("a", id="1")]
    assert decoder.last_event_id == "1"
    assert decoder.feed(b"\n") == [SSEEvent("b", id="2")]
    assert decoder.last_event_id == "2"


def test_retry_takes_digits_only() -> None:
    decoder = SSEDecoder()
    decoder.feed(b"retry: 1500\n\nretry: 2s\n\nretry: -1\n\n")
    assert decoder.retry == 1500
    assert decoder.feed(b"data: a\n\n") == [SSEEvent("a", retry=1500)]


def test_field_without_colon_and_value_spacing() -> None:
    # ``data`` alone is a data line with an empty value; only one leading space is stripped
    assert parse(b"data\ndata:  two spaces\n\n") == [SSEEvent("\n two spaces")]


def test_unknown_fields_and_empty_events_are_ignored() -> None:
    assert parse(b"foo: bar\n\nevent: x\n\n\n\ndata: y\n\n") == [SSEEvent("y")]


def test_event_type_resets_after_dispatch() -> None:
    assert parse(b"event: a\ndata: 1\n\ndata: 2\n\n") == [SSEEvent("1", "a"), SSEEvent("2")]


def test_unfinished_event_at_end_is_not_dispatched() -> None:
    assert parse(b"data: a\n\ndata: partial\n") == [SSEEvent("a")]


def test_invalid_utf8_is_replaced_not_raised() -> None:
    assert parse(b"data: \xff\n\n") == [SSEEvent("\ufffd")]


def test_oversized_line_or_event_is_refused() -> None:
    decoder = SSEDecoder(max_event_bytes=64)
    with pytest.raises(SSEError):
        decoder.feed(b"data: " + b"x" * 100)
    decoder = SSEDecoder(max_event_bytes=64)
    with pytest.raises(SSEError):
        decoder.feed(b"data: " + b"x" * 40 + b"\ndata: " + b"y" * 40 + b"\n")


def test_events_completed_before_a_breach_travel_with_the_error() -> None:
    """A reader delivers them before it gives up: nothing the agent sent in time is lost."""
    first = b"id: 1\ndata: one\n\nid: 2\ndata: two\n\n"
    for breach in (b"data: " + b"x" * 100, b"data: " + b"x" * 40 + b"\ndata: " + b"y" * 40 + b"\n"):
        with pytest.raises(SSEError) as caught:
            SSEDecoder(max_event_bytes=64).feed(first + breach)
        assert caught.value.events == [SSEEvent("one", id="1"), SSEEvent("two", id="2")]


def test_many_lines_in_one_chunk() -> None:
    stream = b"".join(b"id: %d\ndata: %d\n\n" % (i, i) for i in range(5000))
    events = parse(stream)
    assert len(events) == 5000
    assert events[-1] == SSEEvent("4999", id="4999")


EVENTS = st.lists(
    st.tuples(
        st.text(alphabet=st.characters(exclude_characters="\r\n", exclude_categories=["Cs"])),
        st.sampled_from(["", "status", "artifact"]),
        st.text(alphabet="0123456789abc"),
    ),
    max_size=6,
)


@given(EVENTS, st.sampled_from([b"\n", b"\r\n", b"\r"]), st.data())
def test_any_chunking_gives_the_same_events(
    events: list[tuple[str, str, str]], eol: bytes, data: st.DataObject
) -> None:
    stream = b""
    expected = []
    last_id = ""
    for text, kind, event_id in events:
        if event_id:
            stream += b"id: " + event_id.encode() + eol
            last_id = event_id
        if kind:
            stream += b"event: " + kind.encode() + eol
        stream += b": comment" + eol + b"data: " + text.encode() + eol + eol
        expected.append(SSEEvent(text, kind or "message", last_id))
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=8)))
    chunks = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)], strict=True)]
    assert parse(*chunks) == expected
    assert parse(*(bytes([b]) for b in stream)) == expected
