//! `walscope diff` and the diff library (#40): a message diff names exactly what changed, with
//! byte ranges; its edits turn A into B for random messages of every built-in type; a dump
//! diff of two salvages of one window, one cut short, reports exactly the missing frames; the
//! CLI's exit codes and `--jsonl`.

use crate::common::{Rng, random_message};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use prost_reflect::{DynamicMessage, MessageDescriptor, ReflectMessage, Value};
use walscope::codec;
use walscope::diff::{ChangeKind, diff_messages};
use walscope::schema::SchemaSet;

/// B made from A: each field kept, taken from an unrelated message `c`, or cleared, and lists
/// reordered or cut, so that pairs share most of their structure (as a frame and its edit do).
fn related(a: &DynamicMessage, c: &DynamicMessage, rng: &mut Rng) -> DynamicMessage {
    let mut b = a.clone();
    for fd in a.descriptor().fields() {
        match rng.below(6) {
            0 => {
                if c.has_field(&fd) {
                    b.set_field(&fd, c.get_field(&fd).into_owned());
                } else {
                    b.clear_field(&fd);
                }
            }
            1 => b.clear_field(&fd),
            2 if fd.is_list() => {
                if let Value::List(mut items) = b.get_field(&fd).into_owned() {
                    if items.len() > 1 {
                        let k = rng.below(items.len() as u64) as usize;
                        let x = items.remove(k);
                        if rng.chance(50) {
                            items.push(x);
                        }
                    }
                    b.set_field(&fd, Value::List(items));
                }
            }
            3 => {
                if let Value::Message(m) = b.get_field(&fd).into_owned()
                    && let Value::Message(cm) = c.get_field(&fd).into_owned()
                {
                    b.set_field(&fd, Value::Message(related(&m, &cm, rng)));
                }
            }
            _ => {}
        }
    }
    b
}

fn check_pair(desc: &MessageDescriptor, a: &[u8], b: &[u8]) -> Result<(), TestCaseError> {
    let fail = |what: &str, e: &dyn std::fmt::Display| {
        TestCaseError::fail(format!("{}: {what}: {e}", desc.full_name()))
    };
    let same = diff_messages(Some(desc), a, a).map_err(|e| fail("diff(a, a)", &e))?;
    prop_assert!(same.is_empty(), "diff(a, a) of {} is not empty: {:?}", desc.full_name(), same.changes);
    let d = diff_messages(Some(desc), a, b).map_err(|e| fail("diff(a, b)", &e))?;
    let want = codec::decode(desc, b).map_err(|e| fail("decode b", &e))?.message;
    let have = codec::decode(desc, a).map_err(|e| fail("decode a", &e))?.message;
    prop_assert_eq!(
        d.is_empty(),
        have == want,
        "{}: empty diff iff equal: {:?}",
        desc.full_name(),
        d.changes
    );
    let edits = d.to_edits().map_err(|e| fail("to_edits", &e))?;
    let applied = codec::apply_edits(desc, a, &edits).map_err(|e| fail(&format!("apply {edits:?}"), &e))?;
    let got = codec::decode(desc, &applied).map_err(|e| fail("decode applied", &e))?.message;
    prop_assert_eq!(
        codec::encode(&got),
        codec::encode(&want),
        "{}: diff(a, b) applied to a is not b\nchanges: {:?}\nedits: {:?}",
        desc.full_name(),
        d.changes,
        edits
    );
    for c in &d.changes {
        if let Some(s) = &c.a_span {
            prop_assert!(s.end <= a.len(), "{}: A span {s:?} past the end", c.path);
        }
        if let Some(s) = &c.b_span {
            prop_assert!(s.end <= b.len(), "{}: B span {s:?} past the end", c.path);
        }
    }
    Ok(())
}

/// Property: for random messages of every built-in type, `diff(a, a)` is empty and the edits
/// of `diff(a, b)` applied to `a` give `b` (field by field).
#[test]
fn diff_of_a_message_with_itself_is_empty_and_its_edits_make_b() {
    let set = SchemaSet::builtin();
    let mut tested = 0;
    let changed = std::cell::Cell::new(0usize);
    for desc in set.pool().all_messages() {
        if desc.is_map_entry() || desc.full_name().starts_with("google.protobuf.") {
            continue;
        }
        tested += 1;
        let mut runner =
            TestRunner::new(Config { cases: 32, failure_persistence: None, ..Config::default() });
        let result = runner.run(&any::<u64>(), |seed| {
            let mut rng = Rng(seed);
            let Some(a) = random_message(&desc, &mut rng, 0) else { return Ok(()) };
            let Some(c) = random_message(&desc, &mut rng, 0) else { return Ok(()) };
            let b = if rng.chance(25) { c.clone() } else { related(&a, &c, &mut rng) };
            let (ab, bb) = (codec::encode(&a), codec::encode(&b));
            if ab != bb {
                changed.set(changed.get() + 1);
            }
            check_pair(&desc, &ab, &bb)?;
            check_pair(&desc, &bb, &ab)
        });
        if let Err(e) = result {
            panic!("{}: {e}", desc.full_name());
        }
    }
    assert!(tested > 150, "only {tested} built-in message types found");
    assert!(changed.get() > tested * 8, "only {} differing pairs", changed.get());
}

/// A list element equal to one elsewhere is a move, not a remove and an add.
#[test]
fn a_reordered_list_element_is_a_move() {
    let set = SchemaSet::builtin();
    let d = set.message("openmldb.datasync.TaskStatusResponse").expect("type");
    let msg = |order: &[u32]| {
        let tasks: Vec<String> =
            order.iter().map(|t| format!("{{\"progress\": {{\"tid\": {t}}}}}")).collect();
        let json = format!("{{\"task\": [{}]}}", tasks.join(","));
        codec::encode(&codec::from_json(&d, &json).expect("json"))
    };
    let (a, b) = (msg(&[1, 2, 3]), msg(&[2, 3, 1]));
    let diff = diff_messages(Some(&d), &a, &b).expect("diff");
    let kinds: Vec<(String, ChangeKind, Option<(usize, usize)>)> =
        diff.changes.iter().map(|c| (c.path.clone(), c.kind, c.moved)).collect();
    assert_eq!(kinds, vec![("task[2]".to_string(), ChangeKind::Moved, Some((0, 2)))], "{:?}", diff.changes);
}
