//! The grouping rules, case by case as upstream's `chunk_test.go` states them.

use super::*;

fn props<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<&'a str> {
    move |k| pairs.iter().find(|(key, _)| *key == k).map(|(_, v)| *v)
}

fn mark(index: u32, total: u32, tt: u64) -> Option<Result<ChunkMark, String>> {
    Some(Ok(ChunkMark { index, total, tt }))
}

#[test]
fn markers_are_read_as_upstream_checks_them() {
    let ok = mark_of(props(&[("_ci", "1"), ("_ct", "3"), ("_tt", "2s")])).unwrap().unwrap();
    assert_eq!(ok, ChunkMark { index: 1, total: 3, tt: 100 });
    assert_eq!(ok.label(), "chunk 2 of 3");
    assert!(mark_of(props(&[("_tt", "2s")])).is_none(), "no markers: not a chunk");
    for (ci, ct, tt, words) in [
        (None, Some("2"), Some("2s"), "needs both"),
        (Some("0"), None, Some("2s"), "needs both"),
        (Some("x"), Some("2"), Some("2s"), "plain decimals"),
        (Some("+1"), Some("2"), Some("2s"), "plain decimals"),
        (Some("00"), Some("2"), Some("2s"), "plain decimals"),
        (Some("-1"), Some("2"), Some("2s"), "plain decimals"),
        (Some("0"), Some("999999999999999999999999"), Some("2s"), "plain decimals"),
        (Some("0"), Some("1"), Some("2s"), "out of range"),
        (Some("2"), Some("2"), Some("2s"), "out of range"),
        (Some("0"), Some("2"), None, "without _tt"),
        (Some("0"), Some("2"), Some("02s"), "canonical"),
        (Some("0"), Some("2"), Some("2S"), "canonical"),
        (Some("0"), Some("2"), Some("!"), "_tt"),
    ] {
        let mut pairs = Vec::new();
        if let Some(v) = ci {
            pairs.push(("_ci", v));
        }
        if let Some(v) = ct {
            pairs.push(("_ct", v));
        }
        if let Some(v) = tt {
            pairs.push(("_tt", v));
        }
        let got = mark_of(props(&pairs)).expect("a marker is there").expect_err("malformed");
        assert!(got.contains(words), "{ci:?} {ct:?} {tt:?}: {got}");
    }
}

#[test]
fn chunks_join_in_index_order_when_the_last_one_arrives() {
    let mut g = Grouper::default();
    assert_eq!(g.push("a0", mark(0, 3, 100), None, b"aa"), Pushed::Held);
    assert_eq!(g.push("other", None, None, b"x"), Pushed::Plain, "other traffic passes through");
    assert_eq!(g.push("a2", mark(2, 3, 100), None, b"cc"), Pushed::Held);
    assert!(g.is_holding());
    let done = g.push("a1", mark(1, 3, 100), None, b"bb");
    assert_eq!(done, Pushed::Complete(Group { tt: 100, members: vec!["a0", "a1", "a2"] }));
    assert!(!g.is_holding());
    assert!(g.finish().is_empty());
}

#[test]
fn interleaved_groups_are_joined_by_their_own_timeticks() {
    let mut g = Grouper::default();
    g.push("a0", mark(0, 2, 100), None, b"a");
    g.push("b0", mark(0, 2, 200), None, b"b");
    assert_eq!(
        g.push("b1", mark(1, 2, 200), None, b"b"),
        Pushed::Complete(Group { tt: 200, members: vec!["b0", "b1"] })
    );
    assert_eq!(
        g.push("a1", mark(1, 2, 100), None, b"a"),
        Pushed::Complete(Group { tt: 100, members: vec!["a0", "a1"] })
    );
}

#[test]
fn a_byte_identical_repeat_is_dropped_and_the_later_copy_kept() {
    let mut g = Grouper::default();
    g.push("first", mark(0, 2, 7), None, b"same");
    assert_eq!(g.push("retry", mark(0, 2, 7), None, b"same"), Pushed::Duplicate { dropped: "first" });
    assert_eq!(
        g.push("tail", mark(1, 2, 7), None, b"t"),
        Pushed::Complete(Group { tt: 7, members: vec!["retry", "tail"] })
    );
}

#[test]
fn other_bytes_for_a_held_index_or_a_changed_total_break_the_group() {
    let mut g = Grouper::default();
    g.push("a0", mark(0, 3, 7), None, b"one");
    g.push("a1", mark(1, 3, 7), None, b"two");
    match g.push("x1", mark(1, 3, 7), None, b"TWO") {
        Pushed::Broken { tt: 7, members, reason } => {
            assert_eq!(members, vec!["a0", "a1", "x1"]);
            assert!(reason.contains("chunk 2 of 3 came twice with different bytes"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    assert!(!g.is_holding(), "the broken group is dropped");
    g.push("b0", mark(0, 3, 8), None, b"one");
    match g.push("b1", mark(1, 4, 8), None, b"two") {
        Pushed::Broken { members, reason, .. } => {
            assert_eq!(members, vec!["b0", "b1"]);
            assert!(reason.contains("from 3 to 4"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_timetick_ends_the_groups_at_or_before_it_and_the_end_reports_the_rest() {
    let mut g = Grouper::default();
    g.push("old", mark(0, 1_000_000_000, 100), None, b"o");
    g.push("late1", mark(1, 3, 300), None, b"l");
    g.push("new0", mark(0, 2, 200), None, b"n");
    assert_eq!(g.push("tick", None, Some(150), b""), Pushed::Plain);
    let ended = g.take_ended();
    assert_eq!(ended.len(), 1);
    assert_eq!(ended[0].tt, 100);
    assert_eq!(ended[0].missing_count(), 999_999_999, "slots are sparse: nothing allocated by the total");
    assert!(ended[0].missing_words().starts_with("chunks 2, 3, 4"), "{}", ended[0].missing_words());
    assert!(ended[0].missing_words().ends_with("and 999999991 more of 1000000000 missing"));
    assert!(g.take_ended().is_empty());
    let rest = g.finish();
    assert_eq!(rest.iter().map(|i| i.tt).collect::<Vec<_>>(), vec![200, 300], "by timetick");
    assert_eq!(rest[0].missing_words(), "chunk 2 of 2 missing");
    assert_eq!(rest[1].missing().collect::<Vec<_>>(), vec![0, 2], "a group whose head never came says so");
    assert_eq!(rest[1].missing_words(), "chunks 1, 3 of 3 missing");
}

#[test]
fn malformed_markers_are_not_joined() {
    let mut g: Grouper<&str> = Grouper::default();
    let bad = mark_of(props(&[("_ci", "0"), ("_ct", "1"), ("_tt", "1")]));
    assert!(matches!(g.push("bad", bad, None, b""), Pushed::Malformed { .. }));
    assert!(!g.is_holding());
}

#[test]
fn the_assembled_message_has_the_joined_payload_and_no_markers() {
    let set = crate::schema::SchemaSet::builtin();
    let desc = set.message(crate::wal::analyze::IMMUTABLE_MESSAGE).expect("built in");
    let mut head = DynamicMessage::new(desc);
    head.set_field_by_name("payload", Value::Bytes(b"ab".to_vec().into()));
    let mut map = std::collections::HashMap::new();
    for (k, v) in [("_ci", "0"), ("_ct", "2"), ("_tt", "1"), ("_t", "2")] {
        map.insert(MapKey::String(k.into()), Value::String(v.into()));
    }
    head.set_field_by_name("properties", Value::Map(map));
    let whole = assemble(&head, b"abcd".to_vec());
    assert_eq!(whole.get_field_by_name("payload").unwrap().as_bytes().unwrap().as_ref(), b"abcd");
    let props = whole.get_field_by_name("properties").unwrap().as_map().unwrap().clone();
    assert!(!props.contains_key(&MapKey::String("_ci".into())));
    assert!(!props.contains_key(&MapKey::String("_ct".into())));
    assert!(props.contains_key(&MapKey::String("_t".into())));
}
