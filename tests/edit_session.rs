//! Edits to frames of a multi-frame dump: only the edited frame (its bytes and its length
//! prefix) changes when the file is rendered; undo and redo walk the history.

use std::path::Path;
use walscope::codec::Edit;
use walscope::dump::edit_session::EditSession;
use walscope::dump::{DumpFile, OpenOptions};
use walscope::schema::SchemaSet;

#[test]
fn render_changes_only_the_edited_frames() {
    let set = SchemaSet::builtin();
    let desc = set.message("milvus.proto.milvus.DumpMessagesResponse").unwrap();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/samples/milvus-100.dump");
    let d = DumpFile::open(&path, OpenOptions { message_type: Some(desc.clone()), ..Default::default() })
        .unwrap();
    d.wait_indexed();
    let mut s = EditSession::default();
    assert!(!s.is_dirty() && !s.can_undo());
    let long_name = "by-dev-rootcoord-dml_9_4491v0-renamed-for-a-longer-prefix-and-more";
    s.apply(&d, &desc, 7, &Edit::set(&format!("message.properties[\"_vc\"]={long_name}")).unwrap()).unwrap();
    s.apply(&d, &desc, 40, &Edit::set("message.id.id=zz").unwrap()).unwrap();
    assert_eq!(s.edited_frames(), [7, 40]);
    let bad = s.apply(&d, &desc, 3, &Edit::set("message.id.WAL_name=Nope").unwrap());
    assert!(bad.is_err());
    assert_eq!(s.edited_frames(), [7, 40], "a refused edit changes nothing");

    let out = s.render(&d).unwrap();
    let again = DumpFile::from_bytes(
        "x",
        out,
        OpenOptions { message_type: Some(desc.clone()), ..Default::default() },
    );
    again.wait_indexed();
    assert_eq!(again.frame_count(), 100);
    for i in 0..100 {
        let old = d.message_bytes(&d.frame(i).unwrap()).1.to_vec();
        let new = again.message_bytes(&again.frame(i).unwrap()).1.to_vec();
        if i == 7 || i == 40 {
            assert_ne!(old, new);
            assert_eq!(new, s.message(&d, i).unwrap());
            // The edited frame decodes, holds the new value, and every other field kept.
            let before = walscope::codec::decode(&desc, &old).unwrap().message;
            let after = walscope::codec::decode(&desc, &new).unwrap().message;
            let json = |m: &prost_reflect::DynamicMessage| -> serde_json::Value {
                serde_json::from_str(&walscope::codec::to_json(m, false)).unwrap()
            };
            let (mut b, a) = (json(&before), json(&after));
            if i == 7 {
                assert_eq!(a["message"]["properties"]["_vc"], long_name);
                b["message"]["properties"]["_vc"] = serde_json::Value::String(long_name.into());
            } else {
                assert_eq!(a["message"]["id"]["id"], "zz");
                b["message"]["id"]["id"] = serde_json::Value::String("zz".into());
            }
            assert_eq!(a, b, "frame {i}: only the edited field changed");
        } else {
            assert_eq!(old, new, "frame {i} is untouched");
        }
    }
    let diff = s.diff(&d);
    assert_eq!(diff.len(), 2);

    assert_eq!(s.undo(&d), Some(40));
    assert_eq!(s.edited_frames(), [7]);
    assert_eq!(s.redo(&d), Some(40));
    assert_eq!(s.undo(&d), Some(40));
    assert_eq!(s.undo(&d), Some(7));
    assert!(!s.is_dirty());
    assert_eq!(s.render(&d).unwrap(), std::fs::read(&path).unwrap(), "no edits: the same bytes");
}
